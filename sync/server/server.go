package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sync/semaphore"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/internal/authlimit"
	"github.com/storeprint/storeprint/sync"
)

// Notifier wakes a link when something for it was committed elsewhere
// (cloud/postgres implements it with LISTEN/NOTIFY).
type Notifier interface {
	// Subscribe returns a channel that receives a value after a
	// notification on channel with the given payload.
	Subscribe(channel, payload string) (<-chan struct{}, func())
}

// Observer receives the link's measurements; its methods must return at
// once.
type Observer interface {
	// Ingested: a batch of events was stored and acknowledged, deadLetters
	// of them set aside, took from taking an ingest slot to the ack.
	Ingested(events, deadLetters int, took time.Duration)
}

// PollNotified is a link's poll with a Notifier: a net under the
// notifications, not the way commands and revocations reach it. Each
// poll is a few reads a link, and a node holds thousands of links.
const PollNotified = time.Minute

// Server serves /v1/sync.
type Server struct {
	Gateways cloud.GatewayService
	Ingester cloud.Ingester
	Commands cloud.CommandService
	Notifier Notifier // may be nil: then links poll
	Logger   *slog.Logger

	// IngestSlots bounds concurrent ingests on this node, so a gateway back
	// from a day offline cannot swamp the database or starve the others.
	IngestSlots int // default 4
	// Poll is how often a link reads its store's commands, its gateway's
	// revocation and its credential's live link without being woken:
	// every PollNotified with a Notifier, which wakes it at once (and
	// every link after the listener reconnects), else every 10s.
	Poll     time.Duration
	PingWait time.Duration // a link silent this long is dead; default 6s (the gateway pings every 2s)
	// PresenceEvery is how often the node writes when it last heard from
	// each of its links (cloud.PresenceEvery by default). Pings only
	// update memory.
	PresenceEvery time.Duration
	// ReadAheadBytes bounds the frames this node holds read and not yet
	// handled, over all its links (default 32 MiB). A frame counts twice
	// its bytes as sent: its events are decoded as they are read, and
	// the decoded events hold about as much again.
	// Within it a link keeps reading while its batch waits for the
	// database, so pings are answered. The budget applies before a frame
	// is read whole (see readBounded): a link waits for room for a
	// frame's first part, and a frame that grows past what the budget has
	// free closes its link.
	ReadAheadBytes int64
	// Observer, when set, counts the batches acknowledged
	// (cloud/prometheus).
	Observer Observer

	once      stdsync.Once
	base      context.Context
	stop      context.CancelFunc
	slots     chan struct{}
	readAhead *semaphore.Weighted
	badCreds  *authlimit.Limiter
	upgrader  websocket.Upgrader
	links     atomic.Int64
	frameHint atomic.Int64 // the length of the frames links read (see noteFrame)
	started   time.Time    // the zero of the links' heard clocks (monotonic)

	mu   stdsync.Mutex
	open map[*link]struct{} // links whose connect is recorded
	byID map[string]*link   // the same, by link id
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.IngestSlots == 0 {
			s.IngestSlots = 4
		}
		if s.Poll == 0 {
			s.Poll = 10 * time.Second
			if s.Notifier != nil {
				s.Poll = PollNotified
			}
		}
		if s.PingWait == 0 {
			s.PingWait = 6 * time.Second
		}
		if s.PresenceEvery == 0 {
			s.PresenceEvery = cloud.PresenceEvery
		}
		s.started = time.Now()
		s.open = map[*link]struct{}{}
		s.byID = map[string]*link{}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		s.slots = make(chan struct{}, s.IngestSlots)
		if s.ReadAheadBytes <= 0 {
			s.ReadAheadBytes = 32 << 20
		}
		s.readAhead = semaphore.NewWeighted(s.ReadAheadBytes)
		s.badCreds = authlimit.New(BadCredBurst, BadCredEvery, nil)
		s.base, s.stop = context.WithCancel(context.Background())
		go s.presence(s.base)
		s.upgrader = websocket.Upgrader{
			ReadBufferSize:   1024,
			WriteBufferPool:  &stdsync.Pool{},
			HandshakeTimeout: 10 * time.Second,
			// Gateways are not browsers: no Origin to check.
			CheckOrigin: func(*http.Request) bool { return true },
		}
	})
}

// Close cuts every link of this node (the HTTP server's shutdown does not
// wait for hijacked connections).
func (s *Server) Close() {
	s.init()
	s.stop()
}

// Links returns the number of open links on this node.
func (s *Server) Links() int64 { return s.links.Load() }

// IngestLoad returns the ingest slots in use on this node and how many
// it has.
func (s *Server) IngestLoad() (busy, all int) {
	s.init()
	return len(s.slots), cap(s.slots)
}

// presence writes the links' presence every PresenceEvery until ctx ends.
func (s *Server) presence(ctx context.Context) {
	t := time.NewTicker(s.PresenceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.WritePresence(ctx); err != nil && ctx.Err() == nil {
				s.Logger.Warn("record gateway presence", "err", err)
			}
		}
	}
}

// WritePresence records, in one write, when this node last heard from
// each of its open links (a link the gateway went silent on is written as
// last heard, and closed by its reader after PingWait). The server calls
// it every PresenceEvery.
func (s *Server) WritePresence(ctx context.Context) error {
	s.init()
	now := time.Since(s.started)
	s.mu.Lock()
	seen := make([]cloud.LinkSeen, 0, len(s.open))
	for l := range s.open {
		age := now - time.Duration(l.heard.Load())
		seen = append(seen, cloud.LinkSeen{StoreID: l.gw.StoreID, GatewayID: l.gw.ID, LinkID: l.id, Age: age})
	}
	s.mu.Unlock()
	if len(seen) == 0 {
		return nil
	}
	return s.Gateways.Seen(ctx, seen)
}

// ServeHTTP authenticates the gateway and runs its link.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	gatewayID := r.Header.Get(sync.HeaderGateway)
	token, ok := bearer(r)
	if gatewayID == "" || !ok {
		httpError(w, http.StatusUnauthorized, "the sync link needs "+sync.HeaderGateway+" and Authorization: Bearer <gateway token>")
		return
	}
	gw, err := s.Gateways.Authenticate(r.Context(), gatewayID, token)
	if err != nil {
		status := http.StatusUnauthorized
		if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
			status = http.StatusServiceUnavailable
			s.Logger.Error("authenticate gateway", "gateway_id", gatewayID, "err", err)
		} else {
			// Counted and logged, never the token; a valid credential
			// from the same address is served all the same.
			addr := authlimit.Addr(r)
			wait := s.badCreds.Wait(addr)
			limited := s.badCreds.Fail(addr)
			s.Logger.Warn("bad gateway credentials on the sync link", "addr", addr, "gateway_id", safeID(gatewayID), "rate_limited", limited || wait > 0)
			if wait > 0 {
				w.Header().Set("Retry-After", authlimit.RetryAfter(wait))
				httpError(w, http.StatusTooManyRequests, fmt.Sprintf("too many bad gateway credentials from %s; try again in %ss", addr, authlimit.RetryAfter(wait)))
				return
			}
		}
		httpError(w, status, storeprint.ErrorMessage(err))
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	s.links.Add(1)
	defer s.links.Add(-1)
	l := &link{s: s, conn: conn, gw: gw, id: newID(), addr: r.RemoteAddr, replaced: make(chan replacedBy, 1), drained: make(chan struct{}, 1),
		log: s.Logger.With("gateway_id", gw.ID, "store_id", gw.StoreID, "remote_addr", r.RemoteAddr)}
	err = l.run(s.base)
	if err != nil && !isClosed(err) {
		l.log.Info("sync link closed", "err", err)
	}
}

// safeID is a gateway id fit for the log: as sent when it is a valid id.
func safeID(id string) string {
	if storeprint.ValidID(id) {
		return id
	}
	return "(not an id)"
}

// Bad gateway credentials allowed per client address: BadCredBurst at
// once, then one per BadCredEvery; past that 429 with Retry-After.
const (
	BadCredBurst = 10
	BadCredEvery = time.Second
)

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || h[:len(p)] != p {
		return "", false
	}
	return h[len(p):], true
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func newID() string { return storeprint.RandomHex(8) }

func isClosed(err error) bool {
	return websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) || errors.Is(err, context.Canceled)
}

// link is one gateway's open connection.
type link struct {
	s    *Server
	conn *websocket.Conn
	gw   *cloud.Gateway
	id   string
	addr string // the gateway's address as this node sees it
	log  *slog.Logger

	// replaced receives the newer link of the credential that replaced
	// this one on this node.
	replaced chan replacedBy

	incarnation string

	// queued is the read budget this link's frames hold, read and not
	// handled yet; drained receives a value whenever some is released.
	queued  atomic.Int64
	drained chan struct{}

	wmu      stdsync.Mutex // one writer at a time
	heard    atomic.Int64  // when the gateway last sent anything, since the server's start (ns)
	snapshot int           // tasks of the snapshot in progress
}

func (l *link) write(f *sync.Frame) error {
	b, err := sync.Encode(f)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return l.conn.WriteMessage(websocket.TextMessage, b)
}

func (l *link) fail(msg string) error {
	_ = l.write(&sync.Frame{Type: sync.FrameError, Error: msg})
	return errors.New(msg)
}

func (l *link) read() (*sync.Frame, error) {
	typ, b, err := l.conn.ReadMessage()
	if err != nil {
		return nil, err
	}
	return decodeFrame(typ, b)
}

func decodeFrame(typ int, b []byte) (*sync.Frame, error) {
	if typ != websocket.TextMessage {
		return nil, fmt.Errorf("unexpected message type %d", typ)
	}
	return sync.Decode(b)
}

// hear notes that the gateway sent something: memory only, written with
// every other link of the node by WritePresence.
func (l *link) hear() { l.heard.Store(int64(time.Since(l.s.started))) }

// up records the link's connect and adds it to the node's presence; down
// takes it out and records the disconnect.
// A link that comes up replaces its credential's live link: on this node
// it is told at once, on another by a notification on
// cloud.ReplacedChannel (and the watcher's poll).
// A link's hello says which node of the store's cluster it comes from,
// and in which term that node leads: a cluster's takeover is not taken
// for two boxes sharing the credential (cloud.Takeover).
func (l *link) up(ctx context.Context, hello *sync.Frame) (cloud.LinkStart, error) {
	holder := cloud.LinkHolder{Incarnation: hello.Incarnation}
	if c := hello.Cluster; c != nil {
		holder.Node, holder.Term = c.NodeID, c.Term
	}
	st, err := l.s.Gateways.Connect(ctx, l.gw.StoreID, l.gw.ID, cloud.Presence{LinkID: l.id, Online: true, Version: hello.Version, Addr: l.addr, Holder: holder})
	if err != nil {
		return st, err
	}
	l.hear()
	l.s.mu.Lock()
	l.s.open[l] = struct{}{}
	l.s.byID[l.id] = l
	old := l.s.byID[st.Replaced]
	l.s.mu.Unlock()
	if st.Replaced != "" {
		l.log.Warn("sync link replaces the live link of its credential", "replaced_addr", st.ReplacedAddr, "credential_shared", st.Shared)
	}
	if st.Shared {
		l.log.Error("gateway credential in use on more than one box: links replace each other from two addresses",
			"alert", cloud.AlertCredentialShared, "replaced_addr", st.ReplacedAddr)
	}
	if old != nil {
		select {
		case old.replaced <- replacedBy{addr: l.addr, shared: st.Shared}:
		default: // told already
		}
	}
	return st, nil
}

// replacedBy is the link that replaced another.
type replacedBy struct {
	addr   string
	shared bool
}

// closeReplaced ends a link that a newer one replaced, telling its
// gateway who took its place.
func (l *link) closeReplaced(by replacedBy) error {
	msg := "replaced by a new link of this gateway's credential from " + by.addr +
		": a gateway credential has one live link; if another box uses it, give that box its own credential"
	l.log.Warn("sync link replaced: closing it", "new_addr", by.addr)
	_ = l.write(&sync.Frame{Type: sync.FrameError, Code: sync.ErrorReplaced, Error: msg, CredentialShared: by.shared})
	return errors.New(msg)
}

func (l *link) down(ctx context.Context) {
	l.s.mu.Lock()
	delete(l.s.open, l)
	delete(l.s.byID, l.id)
	l.s.mu.Unlock()
	if err := l.s.Gateways.Touch(ctx, l.gw.StoreID, l.gw.ID, cloud.Presence{LinkID: l.id, Online: false}); err != nil {
		l.log.Warn("record gateway presence", "err", err)
	}
}

func (l *link) run(ctx context.Context) error {
	s := l.s
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer l.conn.Close()
	// The hello is small: a link reads no more before it is welcomed.
	l.conn.SetReadLimit(maxHelloBytes)
	l.conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	hello, err := l.read()
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if hello.Type != sync.FrameHello {
		return l.fail("the first frame must be hello")
	}
	if hello.GatewayID != l.gw.ID || (hello.StoreID != "" && hello.StoreID != l.gw.StoreID) {
		return l.fail(fmt.Sprintf("gateway %s belongs to store %s", l.gw.ID, l.gw.StoreID))
	}
	w, err := s.Ingester.Open(ctx, l.gw.ID, l.gw.StoreID, cloud.LinkHello{
		Incarnation: hello.Incarnation, LastSeq: hello.LastSeq, Compacted: hello.Compacted,
		DownCursor: hello.DownCursor, Resync: hello.Resync,
	})
	if err != nil {
		if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
			l.log.Error("open link", "err", err)
			return l.fail("the cloud could not open the link; the link will retry")
		}
		return l.fail("link refused: " + storeprint.ErrorMessage(err))
	}
	l.incarnation = hello.Incarnation
	// Online before the welcome: a gateway that was welcomed is shown.
	st, err := l.up(ctx, hello)
	if err != nil {
		return l.fail(storeprint.ErrorMessage(err))
	}
	defer l.down(context.WithoutCancel(ctx))
	if err := l.write(&sync.Frame{Type: sync.FrameWelcome, StoreID: l.gw.StoreID, Cursor: w.Cursor, Behind: w.Behind, Resync: true,
		CredentialShared: st.Shared}); err != nil {
		return err
	}
	l.conn.SetReadLimit(sync.MaxFrameBytes)
	l.log.Info("sync link up", "incarnation", hello.Incarnation, "cursor", w.Cursor, "down_cursor", hello.DownCursor,
		"reset", w.Reset, "behind", w.Behind, "snapshot", w.Snapshot)
	if w.Behind {
		if err := l.teach(w); err != nil {
			return err
		}
	}

	// The gateway pings; each ping keeps the link and its presence alive.
	l.conn.SetReadDeadline(time.Now().Add(s.PingWait))
	l.conn.SetPingHandler(func(data string) error {
		l.conn.SetReadDeadline(time.Now().Add(s.PingWait))
		l.hear()
		l.wmu.Lock()
		defer l.wmu.Unlock()
		return l.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
	})

	// Two goroutines a link: this one reads the gateway's frames; the
	// watcher sends commands and cuts the link on revocation.
	werr := make(chan error, 1)
	go func() {
		err := l.watch(ctx, w.DownAfter)
		l.conn.Close() // ends the reader
		werr <- err
	}()
	err = l.upstream(ctx)
	cancel()
	if e := <-werr; e != nil && !errors.Is(e, context.Canceled) {
		err = e
	}
	return err
}

// upstream handles the gateway's frames. One goroutine reads them ahead
// (readAhead) while this one handles them in order: a link waiting for an
// ingest slot, or for its batch to commit, still reads the gateway's pings
// and answers them. Events frames waiting behind one another are stored
// in one ingest (see nextFrame). With an Ingester that stages batches,
// the next batch's events are stored while the one before finishes (see
// stage.go).
func (l *link) upstream(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan readFrame, readAheadFrames)
	rerr := make(chan error, 1)
	go func() { rerr <- l.readAhead(ctx, frames) }()
	var held *readFrame // taken from frames, not handled yet
	var fin *finishing  // the batch finishing, its ack not sent yet
	defer func() {
		if held != nil {
			l.release(held.size)
		}
		if fin != nil {
			<-fin.done
			l.release(fin.size)
		}
		// readAhead ends once run closes the connection.
		go func() {
			for q := range frames {
				l.release(q.size)
			}
		}()
	}()
	staging, _ := l.s.Ingester.(cloud.StagedIngester)
	for {
		var finished <-chan struct{}
		if fin != nil {
			finished = fin.done
		}
		f, size, ok := nextFrame(frames, &held, finished)
		if f == nil && ok { // the batch finished before another frame came
			err := l.acked(fin)
			fin = nil
			if err != nil {
				return err
			}
			continue
		}
		if !ok {
			if fin != nil {
				<-fin.done
				err := l.acked(fin)
				fin = nil
				if err != nil {
					return err
				}
			}
			return <-rerr
		}
		if f.Type == sync.FrameEvents && staging != nil {
			// A slot free now stages this batch while fin finishes;
			// with none free, the node is busy with other links, and
			// this one waits for fin first, holding one slot only.
			var next *stagedBatch
			if fin != nil {
				size += gather(frames, &held, f, fin.done)
				var err error
				if next, err = l.tryStage(ctx, staging, f.Events, size); err != nil {
					l.release(size)
					return err
				}
				<-fin.done
				err = l.acked(fin)
				fin = nil
				if err != nil {
					if next != nil {
						next.abort()
					} else {
						l.release(size)
					}
					return err
				}
			}
			if next == nil {
				var err error
				if next, err = l.stage(ctx, staging, f.Events, size); err != nil {
					l.release(size)
					return err
				}
			}
			fin = next.finish(ctx)
			continue
		}
		if fin != nil {
			<-fin.done
			err := l.acked(fin)
			fin = nil
			if err != nil {
				l.release(size)
				return err
			}
		}
		err := l.handle(ctx, f)
		l.release(size)
		if err != nil {
			return err
		}
	}
}

// maxCoalesced bounds the events of one ingest made of several events
// frames: half the sync client's default send window, well within
// cloud.MaxIngestBatch, so that the next batch arrives and is decoded
// while one commits.
const maxCoalesced = 5000

// nextFrame returns the next frame to handle and the read-ahead budget it
// holds; ok is false once frames is closed. An events frame comes with
// the events frames already read behind it, up to maxCoalesced events in
// all: one transaction instead of several, its round trips and fixed
// statements paid once. The first frame of another kind, or one that
// would go past the bound, is kept in held for the next call. When
// finished closes before a frame comes, nextFrame returns no frame and ok.
func nextFrame(frames <-chan readFrame, held **readFrame, finished <-chan struct{}) (f *sync.Frame, size int64, ok bool) {
	var q readFrame
	if *held != nil {
		q, *held = **held, nil
	} else {
		select {
		case q, ok = <-frames:
			if !ok {
				return nil, 0, false
			}
		case <-finished:
			return nil, 0, true
		}
	}
	f, size = q.f, q.size
	if f.Type != sync.FrameEvents {
		return f, size, true
	}
	for len(f.Events) < maxCoalesced {
		var n readFrame
		more := false
		select {
		case n, more = <-frames:
		default: // nothing read behind it yet
		}
		if !more {
			break
		}
		if n.f.Type != sync.FrameEvents || len(f.Events)+len(n.f.Events) > maxCoalesced {
			*held = &n
			break
		}
		f.Events = append(f.Events, n.f.Events...)
		size += n.size
	}
	return f, size, true
}

// gather adds the events frames read behind f to it as they come, until
// it holds maxCoalesced events, another kind of frame comes (kept in
// held), or finished closes, and returns the read-ahead budget they hold:
// a batch staged while the one before finishes is a full one.
func gather(frames <-chan readFrame, held **readFrame, f *sync.Frame, finished <-chan struct{}) (size int64) {
	for *held == nil && len(f.Events) < maxCoalesced {
		select {
		case n, ok := <-frames:
			if !ok {
				return size // closed: nextFrame sees it next
			}
			if n.f.Type != sync.FrameEvents || len(f.Events)+len(n.f.Events) > maxCoalesced {
				*held = &n
				return size
			}
			f.Events = append(f.Events, n.f.Events...)
			size += n.size
		case <-finished:
			return size
		}
	}
	return size
}

// readAheadFrames bounds the frames one link reads ahead: more than a
// gateway's send window holds (sync/client sends 20 batches ahead).
const readAheadFrames = 24

// readAheadSize is what a frame of n bytes holds of the read-ahead
// budget: the bytes and its decoded events.
func readAheadSize(n int) int64 { return 2 * int64(n) }

// readFrame is a frame read ahead, with what it holds of the node's
// read-ahead budget.
type readFrame struct {
	f    *sync.Frame
	size int64
}

// readAhead reads the gateway's frames until the link breaks or ctx ends,
// each within the node's ReadAheadBytes, decodes them with the events they
// carry, and closes frames. The gateway's
// silence counts from when a frame is handed on: time spent waiting for
// room is the node's, not the gateway's.
func (l *link) readAhead(ctx context.Context, frames chan<- readFrame) error {
	defer close(frames)
	s := l.s
	for {
		typ, b, size, err := l.readBounded(ctx)
		if err != nil {
			return err
		}
		l.hear()
		f, err := decodeFrame(typ, b)
		if err != nil {
			s.readAhead.Release(size)
			return err
		}
		if f.Type == sync.FrameEvents {
			sync.CheckEvents(f.Events) // here, while the batch before is stored
		}
		l.queued.Add(size)
		select {
		case frames <- readFrame{f, size}:
		case <-ctx.Done():
			l.release(size)
			return ctx.Err()
		}
		l.conn.SetReadDeadline(time.Now().Add(s.PingWait))
	}
}

// handle applies one frame of the gateway's.
func (l *link) handle(ctx context.Context, f *sync.Frame) error {
	s := l.s
	switch f.Type {
	case sync.FrameEvents:
		if err := l.ingest(ctx, f.Events); err != nil {
			return err
		}
	case sync.FrameSnapshot:
		if err := l.takeSnapshot(ctx, f); err != nil {
			return err
		}
	case sync.FrameStates:
		// The gateway applied the states it was sent.
		if err := s.Ingester.Learned(ctx, l.gw.ID, l.gw.StoreID, l.incarnation); err != nil {
			return err
		}
	case sync.FrameStatus:
		ps := make([]*cloud.Printer, 0, len(f.Printers))
		for _, p := range f.Printers {
			ps = append(ps, &cloud.Printer{ID: p.ID, Status: storeprint.PrinterState(p.Status), Stations: p.Stations, Backup: p.Backup, Failover: p.Failover, Word: p.Word, UpdatedAt: p.At,
				Kind: p.Kind, Open: p.Open, Shown: p.Shown, Stale: p.Stale})
		}
		if err := s.Gateways.UpdatePrinters(ctx, l.gw.StoreID, l.gw.ID, ps); err != nil {
			if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
				return err
			}
			return l.fail("status refused: " + storeprint.ErrorMessage(err))
		}
		if c := f.Cluster; c != nil {
			cl := &cloud.Cluster{NodeID: c.NodeID, Role: c.Role, Leader: c.Leader, Term: c.Term,
				Members: make([]cloud.ClusterMember, 0, len(c.Members))}
			for _, m := range c.Members {
				cl.Members = append(cl.Members, cloud.ClusterMember{NodeID: m.NodeID, State: m.State, Role: m.Role})
			}
			if err := s.Gateways.UpdateCluster(ctx, l.gw.StoreID, l.gw.ID, cl); err != nil {
				if storeprint.ErrorCode(err) == storeprint.EINTERNAL {
					return err
				}
				return l.fail("cluster status refused: " + storeprint.ErrorMessage(err))
			}
		}
	case sync.FrameDownAck:
		if err := s.Commands.AckDownstream(ctx, l.gw.StoreID, f.Seq); err != nil {
			return err
		}
	default:
		return l.fail("unexpected " + f.Type + " frame")
	}
	return nil
}
