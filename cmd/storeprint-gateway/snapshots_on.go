//go:build failpoints

package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/storeprint/storeprint/gateway/raft"
)

// snapshotsFromEnv makes a cluster node snapshot its store and compact
// its log far more often than it does in the field, so that a test sees
// a replaced node catch up from a snapshot: STOREPRINT_CLUSTER_TRAILING_LOGS
// is how many entries a snapshot leaves in the log (and how many make
// the next one), STOREPRINT_CLUSTER_SNAPSHOT_INTERVAL how often the node
// looks. Only test builds (-tags failpoints) have it.
func snapshotsFromEnv(opts *raft.Options) error {
	if v := os.Getenv("STOREPRINT_CLUSTER_TRAILING_LOGS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("STOREPRINT_CLUSTER_TRAILING_LOGS: %q is not a positive number", v)
		}
		opts.TrailingLogs = n
	}
	if v := os.Getenv("STOREPRINT_CLUSTER_SNAPSHOT_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Millisecond {
			return fmt.Errorf("STOREPRINT_CLUSTER_SNAPSHOT_INTERVAL: %q is not a duration of 5ms or more", v)
		}
		opts.SnapshotInterval = d
	}
	return nil
}
