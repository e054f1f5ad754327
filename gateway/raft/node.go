package raft

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	hraft "github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
)

// Options configure a node.
type Options struct {
	Cluster *gateway.ClusterConfig
	// Dir keeps the node's log and snapshots (the gateway's data_dir/raft).
	Dir string
	// Store is the node's own store: the state the log builds.
	Store  *badger.DB
	Logger *slog.Logger
	// Listener, when set, is used instead of listening on Cluster.Listen
	// (tests put a proxy in front of a node).
	Listener net.Listener
	// HeartbeatTimeout is how long a follower waits for its leader before
	// it stands for election (and the leader's lease: see CheckLeader);
	// default 1s. A lost leader is noticed after 1 to 1.2 times this
	// (see detect).
	HeartbeatTimeout time.Duration
	// ApplyTimeout bounds how long an update waits for a majority
	// (default 10s).
	ApplyTimeout time.Duration
	// TrailingLogs is how many entries a snapshot leaves in the log
	// (default 4096): a node further behind gets the snapshot.
	TrailingLogs uint64
	// SnapshotInterval is how often the node looks whether TrailingLogs
	// entries were added since its last snapshot and, if so, takes one
	// (default 2 minutes, plus up to as much at random).
	SnapshotInterval time.Duration
	// Failpoint, when set, is called at the named points of the node's
	// work (the Failpoint* names): tests stop a node there. Production
	// builds leave it nil.
	Failpoint func(name string)
}

// Failpoint names.
const (
	// FailpointBeforeApply: a committed entry is about to be applied to
	// this node's store.
	FailpointBeforeApply = "before-apply"
	// FailpointFenceAsked: CheckLeader has asked the engine to confirm
	// this node's leadership, and waits for the answers.
	FailpointFenceAsked = "fence-asked"
)

// Node is one node of a store's cluster: the replicated gateway.Store the
// gateway runs on, and the node's place in the cluster.
type Node struct {
	opts   Options
	id     string
	peers  []gateway.Peer
	db     *badger.DB
	fsm    *fsm
	raft   *hraft.Raft
	trans  *datedTransport
	stream *stream
	logs   *raftboltdb.BoltStore
	log    *slog.Logger

	inbound *accepted // the connections the node accepted (see accepted)

	mu          stdsync.Mutex // serialises the leader's batches: one recorded write-set at a time
	readyFor    atomic.Uint64 // the term whose earlier entries this leader has applied (see Update, View); written under mu
	updates     chan *update  // Updates waiting for the batcher
	batcherDone chan struct{} // closed when the batcher stops

	leadMu   stdsync.Mutex
	leadFn   func(ctx context.Context)
	stopLead context.CancelFunc
	leadDone chan struct{}

	obsMu   stdsync.Mutex
	changed chan struct{} // closed at the next change of leader

	closing  chan struct{}
	stopping atomic.Bool // set by Close: the leader's function runs no more
	wg       stdsync.WaitGroup
	once     stdsync.Once
}

var (
	_ gateway.Store       = (*Node)(nil)
	_ gateway.LeaderFence = (*Node)(nil)
)

// Open starts the node: it opens its log in opts.Dir, listens on the
// cluster's address and, on first start, bootstraps the cluster from the
// configured peers (every node does the same, with the same peers).
func Open(opts Options) (*Node, error) {
	c := opts.Cluster
	peers, err := c.ParsePeers()
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HeartbeatTimeout == 0 {
		opts.HeartbeatTimeout = time.Second
	}
	if opts.ApplyTimeout == 0 {
		opts.ApplyTimeout = 10 * time.Second
	}
	n := &Node{opts: opts, id: c.NodeID, peers: peers, db: opts.Store, log: opts.Logger.With("node_id", c.NodeID), closing: make(chan struct{}),
		updates: make(chan *update, maxBatch), batcherDone: make(chan struct{})}
	n.fsm = &fsm{db: opts.Store, log: n.log, failpoint: opts.Failpoint}
	applied, err := opts.Store.Applied()
	if err != nil {
		return nil, err
	}
	n.fsm.index.Store(applied)
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster log dir: %w", err)
	}
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Listen); err != nil {
			return nil, fmt.Errorf("cluster.listen: %w", err)
		}
	}
	addrs := map[string]string{}
	for _, p := range peers {
		addrs[p.Address] = p.ID
	}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: logWriter{n.log}})
	n.inbound = newAccepted(ln)
	n.stream = newStream(n.inbound, c.Secret, c.NodeID, c.Witness, addrs, n.log)
	n.trans = newDatedTransport(hraft.NewNetworkTransportWithConfig(&hraft.NetworkTransportConfig{
		Stream: n.stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: hlog,
		ServerAddressProvider: addressBook(peers),
		// No pipelined replication: when a follower refuses an entry the
		// engine's pipeline can lock up (its decoder stops while its
		// sender waits on it), and that follower then gets heartbeats
		// and never another entry, and Shutdown hangs. The model test
		// found both. One append in flight per follower costs little
		// on a store's LAN, where the leader batches updates anyway.
		MaxRPCsInFlight: 1,
	}))
	fail := func(err error) (*Node, error) {
		n.trans.Close()
		if n.logs != nil {
			n.logs.Close()
		}
		return nil, err
	}
	n.logs, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(opts.Dir, "log.bolt")})
	if err != nil {
		return fail(fmt.Errorf("open cluster log: %w", err))
	}
	snaps, err := hraft.NewFileSnapshotStoreWithLogger(opts.Dir, 2, hlog)
	if err != nil {
		return fail(fmt.Errorf("open cluster snapshots: %w", err))
	}
	conf := raftConfig(opts, hlog)
	existing, err := hraft.HasExistingState(n.logs, n.logs, snaps)
	if err != nil {
		return fail(err)
	}
	n.raft, err = hraft.NewRaft(conf, n.fsm, n.logs, n.logs, snaps, n.trans)
	if err != nil {
		return fail(fmt.Errorf("start cluster node: %w", err))
	}
	if !existing {
		if err := n.bootstrap(); err != nil {
			n.raft.Shutdown()
			return fail(err)
		}
	}
	obs := make(chan hraft.Observation, 16)
	n.raft.RegisterObserver(hraft.NewObserver(obs, false, func(o *hraft.Observation) bool {
		_, ok := o.Data.(hraft.LeaderObservation)
		return ok
	}))
	n.wg.Add(4) // watch, observe, detect and greet; the batcher closes batcherDone
	go n.batcher()
	go n.watch()
	go n.observe(obs)
	go n.detect()
	go n.greet()
	return n, nil
}

// raftConfig is the engine's configuration for the node: timeouts from
// the heartbeat, and a store that is not rebuilt from a snapshot at start.
func raftConfig(opts Options, hlog hclog.Logger) *hraft.Config {
	conf := hraft.DefaultConfig()
	conf.LocalID = hraft.ServerID(opts.Cluster.NodeID)
	conf.Logger = hlog
	conf.HeartbeatTimeout = opts.HeartbeatTimeout
	conf.ElectionTimeout = opts.HeartbeatTimeout
	conf.LeaderLeaseTimeout = opts.HeartbeatTimeout / 2
	conf.CommitTimeout = 5 * time.Millisecond
	// The store is durable by itself and knows the last entry it applied:
	// it is not rebuilt from a snapshot at each start.
	conf.NoSnapshotRestoreOnStart = true
	conf.TrailingLogs = cmp.Or(opts.TrailingLogs, 4096)
	conf.SnapshotThreshold = conf.TrailingLogs
	conf.SnapshotInterval = cmp.Or(opts.SnapshotInterval, conf.SnapshotInterval)
	return conf
}

// bootstrap makes the cluster of the configured peers on a node's first
// start; every node does the same, and all but the first are refused.
func (n *Node) bootstrap() error {
	var servers []hraft.Server
	for _, p := range n.peers {
		servers = append(servers, hraft.Server{Suffrage: hraft.Voter, ID: hraft.ServerID(p.ID), Address: hraft.ServerAddress(p.Address)})
	}
	if err := n.raft.BootstrapCluster(hraft.Configuration{Servers: servers}).Error(); err != nil && !errors.Is(err, hraft.ErrCantBootstrap) {
		return fmt.Errorf("bootstrap cluster: %w", err)
	}
	return nil
}

// observe wakes whoever waits on a leadership change.
func (n *Node) observe(obs <-chan hraft.Observation) {
	defer n.wg.Done()
	for {
		select {
		case <-obs:
			n.obsMu.Lock()
			if n.changed != nil {
				close(n.changed)
				n.changed = nil
			}
			n.obsMu.Unlock()
		case <-n.closing:
			return
		}
	}
}

// ID returns the node's id.
func (n *Node) ID() string { return n.id }

// Witness reports whether the node is the cluster's witness.
func (n *Node) Witness() bool { return n.opts.Cluster.Witness }

// Addr returns the address the node listens on for the cluster.
func (n *Node) Addr() net.Addr { return n.stream.Addr() }

// WhileLeader sets the function that runs while this node leads: it
// starts, with a context cancelled when leadership is lost, once the
// node has applied every entry of the terms before, and the node waits
// for it to return before it runs it again. A witness never runs it: it
// hands leadership to a gateway node at once.
func (n *Node) WhileLeader(fn func(ctx context.Context)) {
	n.leadMu.Lock()
	n.leadFn = fn
	n.leadMu.Unlock()
}

// LeaderChanged returns a channel closed at the next change of leader
// this node sees.
func (n *Node) LeaderChanged() <-chan struct{} {
	n.obsMu.Lock()
	defer n.obsMu.Unlock()
	if n.changed == nil {
		n.changed = make(chan struct{})
	}
	return n.changed
}

// IsLeader reports whether this node leads now.
func (n *Node) IsLeader() bool { return n.raft.State() == hraft.Leader }

// watch follows leadership: it starts and stops the leader's function.
func (n *Node) watch() {
	defer n.wg.Done()
	tick := time.NewTicker(n.opts.HeartbeatTimeout / 4)
	defer tick.Stop()
	for {
		select {
		case <-n.closing:
			n.stopLeading()
			return
		case <-n.raft.LeaderCh():
		case <-tick.C:
		}
		if n.IsLeader() {
			n.startLeading()
		} else {
			n.stopLeading()
		}
	}
}

func (n *Node) startLeading() {
	if n.Witness() {
		// To the node heard from last: a live gateway, not one that is gone.
		var to gateway.Peer
		var last time.Time
		for _, p := range n.peers {
			if at, ok := n.stream.lastHeard(p.ID); ok && p.ID != n.id && at.After(last) {
				to, last = p, at
			}
		}
		n.log.Info("the witness was elected: handing leadership to a gateway node", "to", to.ID)
		for {
			f := n.raft.LeadershipTransfer()
			if to.ID != "" {
				f = n.raft.LeadershipTransferToServer(hraft.ServerID(to.ID), hraft.ServerAddress(to.Address))
			}
			err := f.Error()
			if !errors.Is(err, hraft.ErrEnqueueTimeout) {
				if err != nil {
					n.log.Warn("leadership transfer", "to", to.ID, "err", err)
				}
				return
			}
			// Refused at once: the engine is still setting up its
			// leadership. Waiting for the next look at it (a quarter of
			// a heartbeat timeout) would keep the POS waiting as long.
			select {
			case <-time.After(5 * time.Millisecond):
			case <-n.closing:
				return
			}
			if !n.IsLeader() {
				return
			}
		}
	}
	n.leadMu.Lock()
	defer n.leadMu.Unlock()
	if n.stopping.Load() {
		return // Close stopped what the leader runs, for good
	}
	if n.stopLead != nil {
		select {
		case <-n.leadDone:
			n.stopLead = nil // it returned on its own: run it again
		default:
			return // already running
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n.stopLead, n.leadDone = cancel, done
	fn := n.leadFn
	term := n.raft.CurrentTerm()
	n.log.Info("this node leads the cluster", "term", term)
	go func() {
		defer close(done)
		if err := n.ready(ctx); err != nil {
			n.log.Warn("leader could not catch up with the log", "err", err)
			return
		}
		if err := n.pinIncarnation(ctx); err != nil {
			n.log.Warn("leader could not write the store's incarnation", "err", err)
			return
		}
		rctx, stopRoles := context.WithCancel(ctx)
		roles := make(chan struct{})
		go func() { defer close(roles); n.recordRoles(rctx) }()
		defer func() { stopRoles(); <-roles }()
		if fn != nil {
			fn(ctx)
		}
	}()
}

func (n *Node) stopLeading() {
	n.leadMu.Lock()
	cancel, done := n.stopLead, n.leadDone
	n.stopLead, n.leadDone = nil, nil
	n.leadMu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	n.log.Info("this node no longer leads the cluster")
}

// ready waits until this leader has applied every entry of the terms
// before its own: only then does what it records read the store as the
// log left it.
func (n *Node) ready(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.readyLocked(ctx)
}

func (n *Node) readyLocked(ctx context.Context) error {
	term := n.raft.CurrentTerm()
	if n.readyFor.Load() == term {
		return nil
	}
	if err := n.raft.Barrier(n.opts.ApplyTimeout).Error(); err != nil {
		return unavailable(err)
	}
	if n.raft.CurrentTerm() != term || !n.IsLeader() {
		return notLeader(n.leaderID())
	}
	n.readyFor.Store(term)
	return ctx.Err()
}

// AwaitReady waits, at most an election's time (one and a half
// heartbeat timeouts) or until ctx ends, until this leader has applied
// every entry of the terms before its own (see ready), and else answers
// EUNAVAILABLE: before that its store may lack what the leaders before
// it committed. On a node that does not lead it returns nil at once.
func (n *Node) AwaitReady(ctx context.Context) error {
	if !n.IsLeader() || n.readyFor.Load() == n.raft.CurrentTerm() {
		return nil
	}
	errc := make(chan error, 1)
	go func() { errc <- n.ready(context.Background()) }()
	t := time.NewTimer(n.opts.HeartbeatTimeout * 3 / 2)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "this node was elected the cluster's leader moments ago and is still applying the entries before its term; try again")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// metaClustered is set once the cluster's first leader has written its
// incarnation for every node.
const metaClustered = "clustered"

// pinIncarnation makes the first leader's incarnation the cluster's: each
// node's store got its own when it was created, and the cloud must see
// one store.
func (n *Node) pinIncarnation(ctx context.Context) error {
	return n.Update(ctx, func(tx gateway.Tx) error {
		if v, err := tx.Meta(metaClustered); err != nil || v != 0 {
			return err
		}
		inc, err := tx.Meta(gateway.MetaIncarnation)
		if err != nil {
			return err
		}
		tx.SetMeta(gateway.MetaIncarnation, inc)
		tx.SetMeta(metaClustered, 1)
		return nil
	})
}

// Update implements gateway.Store. On the leader it records fn's writes
// against the node's store, appends them to the log and returns once the
// entry is on a majority of the nodes and applied here; elsewhere it
// refuses (EUNAVAILABLE, naming the leader). Updates that arrive while
// an entry is on its way go together in the next one (see batch), as a
// single gateway's share a sync. Once queued an update runs to the end:
// its caller learns the outcome even if it stops waiting.
func (n *Node) Update(ctx context.Context, fn func(gateway.Tx) error) error {
	if !n.IsLeader() {
		return notLeader(n.leaderID())
	}
	r := &update{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case n.updates <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.batcherDone:
		return unavailable(hraft.ErrRaftShutdown)
	}
	select {
	case err := <-r.done:
		return err
	case <-n.batcherDone:
		select {
		case err := <-r.done:
			return err
		default:
			return unavailable(hraft.ErrRaftShutdown)
		}
	}
}

// update is one Update waiting for its batch.
type update struct {
	ctx  context.Context
	fn   func(gateway.Tx) error
	done chan error
}

// maxBatch is the most updates one log entry carries.
const maxBatch = 64

// batcher records the waiting updates, one batch at a time.
func (n *Node) batcher() {
	defer close(n.batcherDone)
	for {
		var first *update
		select {
		case first = <-n.updates:
		case <-n.closing:
			return
		}
		batch := []*update{first}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-n.updates:
				batch = append(batch, r)
			default:
				break more
			}
		}
		n.batch(batch)
	}
}

// batch records a batch of updates as one log entry (or more, when they
// do not fit in one), waits for it and answers each.
func (n *Node) batch(batch []*update) {
	answer := func(rs []*update, err error) {
		for _, r := range rs {
			r.done <- err
		}
	}
	if !n.IsLeader() {
		answer(batch, notLeader(n.leaderID()))
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.readyLocked(context.Background()); err != nil {
		answer(batch, err)
		return
	}
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
		} else {
			live = append(live, r)
		}
	}
	for batch = live; len(batch) > 0; {
		fns := make([]func(gateway.Tx) error, len(batch))
		for i, r := range batch {
			fns[i] = r.fn
		}
		ws, errs, k, err := n.db.RecordBatch(context.Background(), fns)
		if err != nil {
			answer(batch, err)
			return
		}
		err = n.replicate(ws)
		for i, r := range batch[:k] {
			if errs[i] != nil {
				r.done <- errs[i]
			} else {
				r.done <- err
			}
		}
		batch = batch[k:]
	}
}

// replicate appends a write-set to the log and waits until a majority
// has it and this node applied it.
func (n *Node) replicate(ws *badger.WriteSet) error {
	if len(ws.Keys) == 0 {
		return nil // nothing written: nothing to replicate
	}
	b, err := ws.MarshalBinary()
	if err != nil {
		return err
	}
	// Once handed to the log the entry may commit even if this node
	// stops leading: the caller learns the outcome only as far as this
	// node knows it (an unavailable answer may hide a committed entry,
	// which an idempotent retry finds).
	f := n.raft.Apply(b, n.opts.ApplyTimeout)
	if err := f.Error(); err != nil {
		n.readyFor.Store(0)
		return unavailable(err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// View implements gateway.Store: it reads this node's store, which on a
// follower may be a moment behind the leader's. A leader answers only
// once its store has applied every entry of the terms before its own: a
// node just elected may not have applied entries the leader before it
// committed, and would answer with the store as it was (a task missing,
// a ticket still queued that is on paper). It waits for them a bounded
// while (see AwaitReady), else refuses (EUNAVAILABLE).
func (n *Node) View(ctx context.Context, fn func(gateway.ReadTx) error) error {
	if err := n.AwaitReady(ctx); err != nil {
		return err
	}
	return n.db.View(ctx, fn)
}

// Health implements gateway.Store.
func (n *Node) Health() error {
	if p := n.fsm.failed.Load(); p != nil {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "this node's store is behind the cluster's log: %v", *p)
	}
	return n.db.Health()
}

// CheckLeader implements gateway.LeaderFence: nil only when a majority
// of the nodes confirms that this node leads, and the confirmation is
// fresh. Each follower that confirmed accepted an append this leader sent
// after the check began (see datedTransport), and none stands for
// election before a heartbeat timeout without word from it: so no other
// node can lead before the check's start plus that timeout. The answer
// counts only if it came within the first half of that lease (a node
// frozen meanwhile gets an error), so the send that follows it starts
// while this node certainly leads.
func (n *Node) CheckLeader(ctx context.Context) error {
	if !n.IsLeader() {
		return notLeader(n.leaderID())
	}
	t0 := time.Now()
	f := n.raft.VerifyLeader()
	if n.opts.Failpoint != nil {
		n.opts.Failpoint(FailpointFenceAsked)
	}
	errc := make(chan error, 1)
	go func() { errc <- f.Error() }()
	select {
	case err := <-errc:
		if err != nil {
			return unavailable(err)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	// The engine also counts an answer to an append sent before t0; the
	// heartbeats its check sent are answered a moment later.
	if err := n.trans.confirmedSince(ctx, hraft.ServerID(n.id), n.voters(), t0, t0.Add(n.LeaderLease())); err != nil {
		return err
	}
	if took := time.Since(t0); took > n.LeaderLease() {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "the cluster confirmed this node's leadership too late (%s): another node may lead by now", took.Round(time.Millisecond))
	}
	return nil
}

// LeaderLease implements gateway.LeaderFence: a CheckLeader that returned
// nil holds for half a heartbeat timeout from the moment it began.
func (n *Node) LeaderLease() time.Duration { return n.opts.HeartbeatTimeout / 2 }

// Close stops the node (not its store, which its opener closes).
func (n *Node) Close() error {
	var err error
	n.once.Do(func() {
		n.stopping.Store(true)
		if n.IsLeader() {
			// Printing stops first, while this node still leads: an
			// attempt in flight records its outcome (paper that came out
			// is done, not uncertain for the next leader).
			n.stopLeading()
			// A planned stop hands leadership on first: the others need
			// not wait out a heartbeat timeout to elect a new leader.
			if err := n.raft.LeadershipTransfer().Error(); err != nil {
				n.log.Warn("leadership transfer before stopping", "err", err)
			}
		}
		close(n.closing)
		n.wg.Wait()
		n.inbound.closeAll() // no other node's request is handled from here on
		err = n.raft.Shutdown().Error()
		n.trans.Close()
		n.stream.Close()
		if cerr := n.logs.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

// voters are the nodes of the cluster's latest configuration that vote.
func (n *Node) voters() []hraft.ServerID {
	var ids []hraft.ServerID
	for _, s := range n.raft.GetConfiguration().Configuration().Servers {
		if s.Suffrage == hraft.Voter {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func (n *Node) leaderID() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

func notLeader(leader string) error {
	if leader == "" {
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "no cluster leader: the nodes are electing one")
	}
	return storeprint.Errorf(storeprint.EUNAVAILABLE, "this node does not lead the cluster (the leader is %s)", leader)
}

func unavailable(err error) error {
	switch {
	case errors.Is(err, hraft.ErrNotLeader), errors.Is(err, hraft.ErrLeadershipLost), errors.Is(err, hraft.ErrLeadershipTransferInProgress):
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "this node lost the cluster's leadership: %v", err)
	case errors.Is(err, hraft.ErrRaftShutdown):
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "the cluster node is shutting down")
	case errors.Is(err, hraft.ErrEnqueueTimeout):
		return storeprint.Errorf(storeprint.EUNAVAILABLE, "no majority of the cluster answered in time")
	}
	return storeprint.Errorf(storeprint.EUNAVAILABLE, "cluster: %v", err)
}

// addressBook finds a node's address in this node's own peers: the
// configuration, not the replicated membership, says where a node is.
type addressBook []gateway.Peer

func (b addressBook) ServerAddr(id hraft.ServerID) (hraft.ServerAddress, error) {
	for _, p := range b {
		if p.ID == string(id) {
			return hraft.ServerAddress(p.Address), nil
		}
	}
	return "", fmt.Errorf("node %s is not in cluster.peers", id)
}

// WaitApplied waits until this node's store has applied the log up to
// index.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		ch := n.fsm.changed()
		if n.fsm.index.Load() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Snapshot takes a snapshot of the store now and compacts the log
// behind it (raft also does so on its own every few thousand entries).
func (n *Node) Snapshot() error { return n.raft.Snapshot().Error() }

// Applied is the index of the last log entry this node's store applied.
func (n *Node) Applied() uint64 { return n.fsm.index.Load() }

// logWriter passes raft's log lines to the gateway's log.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			w.l.Warn("raft: " + line)
		}
	}
	return len(p), nil
}

var _ io.Writer = logWriter{}
