package epos

import (
	"context"
	"net"
	"sync"
)

// Go's HTTP transport reports a request written (httptrace's
// WroteRequest) before it flushes its write buffer to the connection, and
// that buffer can hold a whole ticket: a gateway killed then has sent
// nothing, though its attempt says the bytes are out. So the print
// request's connection is wrapped (see newTransport): WroteRequest arms
// its sent, and the write that follows, the transport's flush, closes it.
// Over TLS the flush is one record, one write beneath it. Should the
// request end exactly at the end of the buffer, nothing is left to flush
// and nothing closes sent: Send then returns with the printer's answer.
type sent struct {
	mu    sync.Mutex
	armed bool
	out   chan struct{} // closed once the request's last byte is written
}

func newSent() *sent { return &sent{out: make(chan struct{})} }

// arm is called as the transport reports the request written.
func (s *sent) arm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

// wrote is called after each write to the connection.
func (s *sent) wrote() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed {
		s.armed = false
		close(s.out)
	}
}

// sentKey carries a print request's sent to its dial (the transport
// dials with the request's context values).
type sentKey struct{}

type sentConn struct {
	net.Conn
	s *sent
}

func (c sentConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.s.wrote()
	return n, err
}

// dialSent wraps dial: a connection dialed for a print request tells its
// sent of each write.
func dialSent(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if s, ok := ctx.Value(sentKey{}).(*sent); ok {
			return sentConn{c, s}, nil
		}
		return c, nil
	}
}
