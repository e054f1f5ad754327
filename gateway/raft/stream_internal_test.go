package raft

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"
)

func listen(t *testing.T, secret, nodeID string) *stream {
	t.Helper()
	return listenAs(t, secret, nodeID, false)
}

func listenAs(t *testing.T, secret, nodeID string, witness bool) *stream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newStream(ln, secret, nodeID, witness, map[string]string{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStream_Handshake(t *testing.T) {
	t.Parallel()
	server := listen(t, "the-cluster-secret", "gw-a")
	addr := server.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("OK", func(t *testing.T) {
		client := listen(t, "the-cluster-secret", "gw-b")
		c, err := client.dial(ctx, addr, kindRaft)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := server.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Close()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(got, b); err != nil || string(b) != "ping" {
			t.Fatalf("got %q %v, want ping", b, err)
		}
		if _, heard := server.lastHeard("gw-b"); !heard {
			t.Error("the server did not note the client's node id")
		}
	})
	t.Run("Roles", func(t *testing.T) {
		// Each end learns the role the other states: the witness
		// dialling, and the server answering.
		client := listenAs(t, "the-cluster-secret", "wit", true)
		client.addrs[addr] = "gw-a"
		c, err := client.dial(ctx, addr, kindRaft)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := server.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Close()
		if roles, _ := server.statedRoles(); !roles["wit"] {
			t.Errorf("the server's roles: got %v, want wit the witness", roles)
		}
		if roles, _ := client.statedRoles(); len(roles) != 1 || roles["gw-a"] {
			t.Errorf("the witness's roles: got %v, want gw-a a gateway", roles)
		}
	})
	t.Run("ErrWrongSecret", func(t *testing.T) {
		client := listen(t, "another-secret!!", "intruder")
		if _, err := client.dial(ctx, addr, kindHTTP); !errors.Is(err, ErrRefused) {
			t.Fatalf("got %v, want refused", err)
		}
	})
	t.Run("ErrNoHandshake", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		nonce := make([]byte, nonceSize)
		if _, err := io.ReadFull(c, nonce); err != nil {
			t.Fatal(err)
		}
		// A raft request without the handshake: the server closes.
		c.Write(append([]byte{kindRaft}, make([]byte, nonceSize+1+32)...))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 64)); err == nil {
			t.Fatalf("the server answered %d bytes to a connection without the secret", n)
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept the connection open")
		}
	})
	t.Run("ErrImpostorServer", func(t *testing.T) {
		// A server without the secret cannot pass for a node either.
		impostor := listen(t, "not-the-secret!!", "gw-a")
		client := listen(t, "the-cluster-secret", "gw-b")
		go func() {
			if c, err := impostor.Accept(); err == nil {
				c.Close()
			}
		}()
		if _, err := client.dial(ctx, impostor.Addr().String(), kindRaft); !errors.Is(err, ErrRefused) {
			t.Fatalf("got %v, want refused", err)
		}
	})
}
