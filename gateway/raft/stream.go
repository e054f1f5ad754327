package raft

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	stdsync "sync"
	"time"

	hraft "github.com/hashicorp/raft"

	"github.com/storeprint/storeprint"
)

// The nodes' own traffic runs over TCP on the cluster's listen address.
// Every connection opens with a handshake that proves both ends hold the
// cluster's secret, without sending it:
//
//	server → client: its nonce (32 bytes)
//	client → server: kind (1 byte), its nonce (32), its role (1 byte),
//	                 its node id (1 byte length, then the id),
//	                 HMAC-SHA256(secret, "client" | kind | server nonce |
//	                 client nonce | node id | client role)
//	server → client: its role (1 byte), HMAC-SHA256(secret, "server" |
//	                 kind | client nonce | server nonce | node id |
//	                 server role)
//
// A MAC that does not match (compared in constant time) closes the
// connection before anything else is read from it. The kind says what
// the connection carries: the consensus protocol, a POS request a
// follower passes to the leader (HTTP), or nothing (a greeting: the
// handshake alone, closed after it, by which a node learns another's
// role at its start; see greet). The role says whether the node
// is a gateway or the witness, as its own configuration says: each end
// learns the other's, and the leader records them in the replicated
// store for every node (see roles.go).
const (
	kindRaft  byte = 1
	kindHTTP  byte = 2
	kindHello byte = 3

	roleGateway byte = 0
	roleWitness byte = 1

	nonceSize        = 32
	handshakeTimeout = 2 * time.Second // a node that cannot answer within it on a LAN is stuck
)

// ErrRefused is a connection whose peer did not prove it holds the
// cluster's secret.
var ErrRefused = errors.New("cluster handshake refused: the peer does not hold the cluster's secret")

func mac(secret []byte, side string, kind byte, a, b []byte, nodeID string, role byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(side))
	m.Write([]byte{kind})
	m.Write(a)
	m.Write(b)
	m.Write([]byte(nodeID))
	m.Write([]byte{role})
	return m.Sum(nil)
}

// stream is the cluster's authenticated TCP layer: a raft.StreamLayer for
// the consensus traffic, and the listener of the POS requests passed on
// by followers.
type stream struct {
	ln     net.Listener
	secret []byte
	nodeID string
	role   byte // this node's: roleGateway or roleWitness
	log    *slog.Logger
	addrs  map[string]string // peer address → node id

	raftc, httpc chan net.Conn
	closed       chan struct{}
	once         stdsync.Once

	mu    stdsync.Mutex
	heard map[string]time.Time // node id → last bytes read from it
	roles map[string]byte      // node id → the role it stated at its last handshake
	// rolesChanged is closed when a node states a role it had not
	// stated before.
	rolesChanged chan struct{}
}

var _ hraft.StreamLayer = (*stream)(nil)

func newStream(ln net.Listener, secret, nodeID string, witness bool, addrs map[string]string, log *slog.Logger) *stream {
	s := &stream{
		ln: ln, secret: []byte(secret), nodeID: nodeID, log: log, addrs: addrs,
		raftc: make(chan net.Conn), httpc: make(chan net.Conn), closed: make(chan struct{}),
		heard: map[string]time.Time{}, roles: map[string]byte{}, rolesChanged: make(chan struct{}),
	}
	if witness {
		s.role = roleWitness
	}
	go s.serve()
	return s
}

// serve accepts connections and hands each, once authenticated, to the
// consensus layer or the POS listener.
func (s *stream) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("cluster listener stopped", "err", err)
			return
		}
		go s.accept(c)
	}
}

func (s *stream) accept(c net.Conn) {
	kind, peer, err := s.serverHandshake(c)
	if err != nil {
		s.log.Warn("cluster connection refused", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	conn := &heardConn{Conn: c, s: s, peer: peer}
	conn.note()
	if kind == kindHello {
		c.Close() // the roles are stated: all a greeting is for
		return
	}
	ch := s.raftc
	if kind == kindHTTP {
		ch = s.httpc
	}
	select {
	case ch <- conn:
	case <-s.closed:
		c.Close()
	}
}

func (s *stream) serverHandshake(c net.Conn) (byte, string, error) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	sn := storeprint.RandomBytes(nonceSize)
	if _, err := c.Write(sn); err != nil {
		return 0, "", err
	}
	head := make([]byte, 1+nonceSize+2)
	if _, err := io.ReadFull(c, head); err != nil {
		return 0, "", err
	}
	kind, cn, role := head[0], head[1:1+nonceSize], head[1+nonceSize]
	if kind != kindRaft && kind != kindHTTP && kind != kindHello {
		return 0, "", ErrRefused
	}
	rest := make([]byte, int(head[2+nonceSize])+sha256.Size)
	if _, err := io.ReadFull(c, rest); err != nil {
		return 0, "", err
	}
	id, got := string(rest[:len(rest)-sha256.Size]), rest[len(rest)-sha256.Size:]
	if !hmac.Equal(got, mac(s.secret, "client", kind, sn, cn, id, role)) {
		return 0, "", ErrRefused
	}
	if _, err := c.Write(append([]byte{s.role}, mac(s.secret, "server", kind, cn, sn, id, s.role)...)); err != nil {
		return 0, "", err
	}
	s.stated(id, role)
	return kind, id, nil
}

func (s *stream) dial(ctx context.Context, address string, kind byte) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	role, err := s.clientHandshake(c, kind)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", address, err)
	}
	s.stated(s.addrs[address], role)
	conn := &heardConn{Conn: c, s: s, peer: s.addrs[address]}
	conn.note()
	return conn, nil
}

// clientHandshake proves this node to the server and returns the role
// the server stated.
func (s *stream) clientHandshake(c net.Conn, kind byte) (byte, error) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	sn := make([]byte, nonceSize)
	if _, err := io.ReadFull(c, sn); err != nil {
		return 0, err
	}
	cn := storeprint.RandomBytes(nonceSize)
	msg := append([]byte{kind}, cn...)
	msg = append(msg, s.role, byte(len(s.nodeID)))
	msg = append(msg, s.nodeID...)
	msg = append(msg, mac(s.secret, "client", kind, sn, cn, s.nodeID, s.role)...)
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	got := make([]byte, 1+sha256.Size)
	if _, err := io.ReadFull(c, got); err != nil {
		return 0, ErrRefused // the server closes on a wrong MAC
	}
	role := got[0]
	if !hmac.Equal(got[1:], mac(s.secret, "server", kind, cn, sn, s.nodeID, role)) {
		return 0, ErrRefused
	}
	return role, nil
}

// Dial implements raft.StreamLayer.
func (s *stream) Dial(address hraft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.dial(ctx, string(address), kindRaft)
}

// Accept implements net.Listener for the consensus layer.
func (s *stream) Accept() (net.Conn, error) {
	select {
	case c := <-s.raftc:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

// Close stops listening.
func (s *stream) Close() error {
	var err error
	s.once.Do(func() {
		close(s.closed)
		err = s.ln.Close()
	})
	return err
}

// Addr is the cluster's listen address.
func (s *stream) Addr() net.Addr { return s.ln.Addr() }

// lastHeard returns when the node last sent this one anything.
func (s *stream) lastHeard(nodeID string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.heard[nodeID]
	return t, ok
}

// stated notes the role a node stated at an authenticated handshake.
func (s *stream) stated(nodeID string, role byte) {
	if nodeID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.roles[nodeID]; ok && old == role {
		return
	}
	s.roles[nodeID] = role
	close(s.rolesChanged)
	s.rolesChanged = make(chan struct{})
}

// statedRoles returns the roles the nodes stated at their last handshake
// (node id → witness), and a channel closed at the next change.
func (s *stream) statedRoles() (map[string]bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.roles))
	for id, r := range s.roles {
		out[id] = r == roleWitness
	}
	return out, s.rolesChanged
}

// heardConn notes when its peer was last heard from.
type heardConn struct {
	net.Conn
	s    *stream
	peer string
}

func (c *heardConn) note() {
	if c.peer == "" {
		return
	}
	c.s.mu.Lock()
	c.s.heard[c.peer] = time.Now()
	c.s.mu.Unlock()
}

func (c *heardConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.note()
	}
	return n, err
}

// httpListener is the listener of POS requests passed on by followers:
// the leader's HTTP server serves it beside its own.
type httpListener struct{ s *stream }

func (l httpListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.httpc:
		return c, nil
	case <-l.s.closed:
		return nil, net.ErrClosed
	}
}

func (l httpListener) Close() error   { return nil }
func (l httpListener) Addr() net.Addr { return l.s.ln.Addr() }
