//go:build !failpoints

package main

import "github.com/storeprint/storeprint/gateway/raft"

// snapshotsFromEnv is inert in production builds: a node snapshots its
// store as raft.Options' defaults say.
func snapshotsFromEnv(*raft.Options) error { return nil }
