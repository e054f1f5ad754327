package main

import (
	"context"
	"log/slog"
	"path/filepath"
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/gateway/raft"
	"github.com/storeprint/storeprint/internal/version"
	"github.com/storeprint/storeprint/sync"
	synclink "github.com/storeprint/storeprint/sync/client"
)

// ClusterHeartbeat is how long a follower waits for its leader before it
// stands for election: a lost leader is replaced a little after this.
var ClusterHeartbeat = time.Second

// openNode starts this node of the store's cluster; its log and
// snapshots live in data_dir/raft.
func openNode(cfg *gateway.Config, db *badger.DB, log *slog.Logger) (*raft.Node, error) {
	opts := raft.Options{
		Cluster: cfg.Cluster, Dir: filepath.Join(cfg.DataDir, "raft"), Store: db, Logger: log,
		HeartbeatTimeout: ClusterHeartbeat,
	}
	if err := snapshotsFromEnv(&opts); err != nil {
		return nil, err
	}
	return raft.Open(opts)
}

// lead runs what only the cluster's leader runs, until ctx ends with its
// leadership: the printers' workers (after settling the attempts the
// leader before may have started, as after a crash), the retention sweep
// and the sync link.
func (m *Main) lead(ctx context.Context, log *slog.Logger) {
	log.Info("leading the cluster: printing", "node_id", m.Node.ID())
	m.Gateway.EndStartupHold()
	var wg stdsync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.Gateway.NewSweeper(gateway.SweeperOptions{Reclaim: m.Store.ReclaimSpace}).Run(ctx)
	}()
	if cfg := m.Config; cfg.Cloud != nil {
		link := &synclink.Client{
			URL: cfg.Cloud.URL, GatewayID: cfg.Cloud.GatewayID, Token: cfg.Cloud.Token,
			StoreID: cfg.StoreID, Version: version.String(), Gateway: m.Gateway, Logger: log, Clock: m.Clock,
			OnChange: m.Gateway.Notify, Cluster: m.clusterStatus,
		}
		m.leaderLink.Store(link)
		defer m.leaderLink.Store(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			link.Run(ctx)
		}()
	}
	if err := m.Gateway.Run(ctx); err != nil {
		log.Error("dispatcher", "err", err)
	}
	wg.Wait()
	log.Info("no longer leading the cluster: printing stopped", "node_id", m.Node.ID())
}

// clusterStatus is the cluster as this node sees it, for the status
// reports of the sync link: HQ shows each node's role and state.
func (m *Main) clusterStatus() *sync.ClusterStatus {
	st := m.Node.State()
	out := &sync.ClusterStatus{NodeID: st.NodeID, Role: st.Role, Leader: st.Leader, Term: st.Term,
		Members: make([]sync.ClusterMember, 0, len(st.Members))}
	for _, mb := range st.Members {
		out.Members = append(out.Members, sync.ClusterMember{NodeID: mb.NodeID, State: mb.State, Role: mb.Role})
	}
	return out
}
