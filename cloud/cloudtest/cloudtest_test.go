package cloudtest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/cloudtest"
	"github.com/storeprint/storeprint/sync"
)

func setup(t *testing.T) (*cloudtest.Cloud, *cloud.Gateway, string) {
	t.Helper()
	c := cloudtest.New()
	gw, token, err := c.CreateGateway(context.Background(), "s1", cloud.Note{})
	if err != nil {
		t.Fatal(err)
	}
	return c, gw, token
}

func event(seq uint64, taskNo string) sync.Event {
	b, _ := json.Marshal(sync.TaskEvent{TaskNo: taskNo, Version: seq, OrderID: "o1", Station: "hot", PrinterID: "hot-1",
		Status: storeprint.StatusQueued})
	return sync.Event{Seq: seq, Kind: sync.KindTask, TaskNo: taskNo, At: time.Now(), Data: b}
}

func TestCloud_Ingest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c, gw, _ := setup(t)
		if _, err := c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			seqs []uint64
			want uint64
		}{{[]uint64{1, 3}, 1}, {[]uint64{2}, 3}, {[]uint64{1, 2, 3}, 3}, {[]uint64{3 + sync.MaxWindow + 1}, 3}} {
			var events []sync.Event
			for _, s := range tc.seqs {
				events = append(events, event(s, "t1"))
			}
			res, err := c.Ingest(ctx, gw.ID, "s1", "i1", events)
			if err != nil || res.Cursor != tc.want {
				t.Fatalf("ingest %v: got cursor %v (%v), want %d", tc.seqs, res, err, tc.want)
			}
		}
		if l := c.Link(gw.ID, "i1"); len(l.Events) != 3 || l.Replayed != 3 {
			t.Fatalf("got %d events stored and %d replayed, want 3 and 3", len(l.Events), l.Replayed)
		}
		if task, ok := c.Task("s1", "t1"); !ok || task.Version != 3 {
			t.Fatalf("got task %+v, want version 3", task)
		}
	})

	t.Run("DeadLetter", func(t *testing.T) {
		t.Parallel()
		c, gw, _ := setup(t)
		c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1"})
		res, err := c.Ingest(ctx, gw.ID, "s1", "i1", []sync.Event{{Seq: 1, Kind: sync.KindTask, Data: json.RawMessage(`{}`)}})
		if err != nil || res.Cursor != 1 || len(res.DeadLetters) != 1 {
			t.Fatalf("got %+v (%v), want the cursor past a dead letter", res, err)
		}
	})

	t.Run("ErrNoLink", func(t *testing.T) {
		t.Parallel()
		c, gw, _ := setup(t)
		if _, err := c.Ingest(ctx, gw.ID, "s1", "i1", nil); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("got %v, want EUNAUTHORIZED", err)
		}
	})

	t.Run("ErrRevoked", func(t *testing.T) {
		t.Parallel()
		c, gw, token := setup(t)
		c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1"})
		revoked, unsubscribe := c.Subscribe(cloud.RevokedChannel, gw.ID)
		defer unsubscribe()
		if _, err := c.RevokeGateway(ctx, gw.ID, cloud.Note{}); err != nil {
			t.Fatal(err)
		}
		<-revoked
		if _, err := c.Ingest(ctx, gw.ID, "s1", "i1", nil); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("got %v, want EUNAUTHORIZED", err)
		}
		if _, err := c.Authenticate(ctx, gw.ID, token); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("got %v, want EUNAUTHORIZED", err)
		}
	})
}

func TestCloud_Open(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, gw, _ := setup(t)
	c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1", Resync: true})
	c.Ingest(ctx, gw.ID, "s1", "i1", []sync.Event{event(1, "t1"), event(2, "t2")})

	// The gateway comes back with seq 1 alone: it learns t2, and its next
	// seq 2 is stored after the cloud's.
	w, err := c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1", LastSeq: 1, Resync: true})
	if err != nil || !w.Behind || w.Cursor != 1 || len(w.States) != 1 || w.States[0].TaskNo != "t2" {
		t.Fatalf("got %+v (%v), want behind at 1 learning t2", w, err)
	}
	if res, _ := c.Ingest(ctx, gw.ID, "s1", "i1", []sync.Event{event(2, "t3")}); res.Cursor != 2 {
		t.Fatalf("got cursor %d, want 2", res.Cursor)
	}
	if err := c.Learned(ctx, gw.ID, "s1", "i1"); err != nil {
		t.Fatal(err)
	}
	// A cloud behind what the gateway compacted asks for a snapshot.
	w, _ = c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i1", LastSeq: 9, Compacted: 9, Resync: true})
	if w.Behind || !w.Snapshot {
		t.Fatalf("got %+v, want a snapshot asked for", w)
	}
	// A new incarnation is a reset.
	if w, _ = c.Open(ctx, gw.ID, "s1", cloud.LinkHello{Incarnation: "i2", Resync: true}); !w.Reset || w.Cursor != 0 {
		t.Fatalf("got %+v, want a reset at 0", w)
	}
}

func TestCloud_Submit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, _ := setup(t)
	queued, unsubscribe := c.Subscribe(cloud.DownstreamChannel, "s1")
	defer unsubscribe()
	r := &cloud.CommandRequest{ID: "c1", Kind: storeprint.CommandRetry, TaskNo: "t1"}
	if cmd, created, err := c.Submit(ctx, "s1", r); err != nil || !created || cmd.Seq != 1 {
		t.Fatalf("got %+v %v %v, want seq 1 created", cmd, created, err)
	}
	<-queued
	if _, created, err := c.Submit(ctx, "s1", r); err != nil || created {
		t.Fatalf("got %v %v, want the queued command again", created, err)
	}
	r2 := &cloud.CommandRequest{ID: "c1", Kind: storeprint.CommandReprint, TaskNo: "t1"}
	if _, _, err := c.Submit(ctx, "s1", r2); storeprint.ErrorCode(err) != storeprint.ECONFLICT {
		t.Fatalf("got %v, want ECONFLICT", err)
	}
	if _, _, err := c.Submit(ctx, "s1", &cloud.CommandRequest{Kind: storeprint.CommandRetry}); storeprint.ErrorCode(err) != storeprint.EINVALID {
		t.Fatalf("got %v, want EINVALID", err)
	}
	c.AckDownstream(ctx, "s1", 1)
	c.AckDownstream(ctx, "s1", 0)
	if cmds, _ := c.Downstream(ctx, "s1", 0, 10); len(cmds) != 1 || c.DownAcked("s1") != 1 {
		t.Fatalf("got %d commands, acked %d, want 1 and 1", len(cmds), c.DownAcked("s1"))
	}
}
