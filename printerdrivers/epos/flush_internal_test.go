package epos

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
)

// slowConn holds each write for a while before it reaches the socket, as a
// busy machine may between the transport's buffer and the kernel.
type slowConn struct {
	net.Conn
	payload []byte
	done    *atomic.Bool // the write with the payload's end has completed
}

func (c slowConn) Write(p []byte) (int, error) {
	time.Sleep(50 * time.Millisecond) // the fake's slowness, not a wait of the test
	n, err := c.Conn.Write(p)
	if bytes.HasSuffix(p, c.payload[len(c.payload)-32:]) {
		c.done.Store(true)
	}
	return n, err
}

// Send returns only once the whole request has been written to the
// connection: the transport's own report comes before it flushes its
// buffer, and a gateway killed then would have sent nothing.
func TestConn_Send(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // reads the request, never answers
			defer c.Close()
		}
	}()
	tr := newTransport(gateway.PrinterConfig{ID: "ep-1", Address: "http://" + ln.Addr().String(),
		ConnectTimeout: gateway.Duration{Duration: 5 * time.Second}, ConfirmTimeout: gateway.Duration{Duration: 5 * time.Second}})
	defer tr.Close()
	payload := Envelope([]byte("<epos-print><text>kung pao chicken</text><cut/></epos-print>"), "")
	var done atomic.Bool
	dial := &net.Dialer{}
	tr.print.Transport.(*http.Transport).DialContext = dialSent(func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return slowConn{c, payload, &done}, nil
	})
	pc, err := tr.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.(printerdrivers.JobConn).Send(context.Background(), &gateway.PrintJob{}, payload, func() {}); err != nil {
		t.Fatal(err)
	}
	if !done.Load() {
		t.Error("got Send returned before the request's last byte was written to the connection, want after")
	}
}
