package raft

import (
	"net"
	stdsync "sync"
)

// accepted is the node's listener, keeping the connections it accepted
// so that Close can end them before the log closes. The engine does not
// wait for the handlers of its inbound connections when it shuts down:
// one that took a heartbeat just then went on to save the term in a log
// already closed, and the engine panics on that.
type accepted struct {
	net.Listener
	mu   stdsync.Mutex
	open map[*acceptedConn]struct{}
}

func newAccepted(ln net.Listener) *accepted {
	return &accepted{Listener: ln, open: map[*acceptedConn]struct{}{}}
}

func (l *accepted) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ac := &acceptedConn{Conn: c, l: l}
	l.mu.Lock()
	l.open[ac] = struct{}{}
	l.mu.Unlock()
	return ac, nil
}

// closeAll closes every connection accepted so far.
func (l *accepted) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.open {
		c.Conn.Close()
	}
}

type acceptedConn struct {
	net.Conn
	l *accepted
}

func (c *acceptedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.open, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
