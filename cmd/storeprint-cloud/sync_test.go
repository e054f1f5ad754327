package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/sync"
)

// The sync link refuses unknown gateways, wrong tokens and revoked
// gateways, and a gateway writes only its own store's tasks whatever its
// frames claim.
func TestSync_Refusals(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0")
	a := createStore(t, node.base, "t1", "s-a")
	b := createStore(t, node.base, "t2", "s-b")
	url := "ws://" + strings.TrimPrefix(node.base, "http://") + sync.Path
	dial := func(gatewayID, token string) (*websocket.Conn, int) {
		h := map[string][]string{"Authorization": {"Bearer " + token}, sync.HeaderGateway: {gatewayID}}
		conn, resp, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			if resp == nil {
				t.Fatal(err)
			}
			return nil, resp.StatusCode
		}
		t.Cleanup(func() { conn.Close() })
		return conn, 101
	}
	send := func(conn *websocket.Conn, f *sync.Frame) {
		b, _ := sync.Encode(f)
		if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
			t.Fatal(err)
		}
	}
	read := func(conn *websocket.Conn) *sync.Frame {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, m, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		f, err := sync.Decode(m)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}

	t.Run("ErrUnknownGateway", func(t *testing.T) {
		if _, code := dial("gw-nope", a.token); code != 401 {
			t.Fatalf("got %d, want 401", code)
		}
	})
	t.Run("ErrWrongToken", func(t *testing.T) {
		if _, code := dial(a.gatewayID, b.token); code != 401 {
			t.Fatalf("got %d, want 401", code)
		}
	})
	t.Run("ErrOtherStore", func(t *testing.T) {
		conn, _ := dial(a.gatewayID, a.token)
		send(conn, &sync.Frame{Type: sync.FrameHello, GatewayID: a.gatewayID, StoreID: b.id})
		if f := read(conn); f.Type != sync.FrameError || !strings.Contains(f.Error, a.id) {
			t.Fatalf("got %+v, want an error naming the gateway's own store", f)
		}
	})
	t.Run("OwnStoreOnly", func(t *testing.T) {
		conn, _ := dial(a.gatewayID, a.token)
		send(conn, &sync.Frame{Type: sync.FrameHello, GatewayID: a.gatewayID, StoreID: a.id})
		if f := read(conn); f.Type != sync.FrameWelcome || f.StoreID != a.id {
			t.Fatalf("got %+v, want welcome to %s", f, a.id)
		}
		now := time.Now().UTC()
		data, _ := json.Marshal(sync.TaskEvent{TaskNo: "order_x_station_hot", Version: 1, OrderID: "x", Station: "hot",
			Status: "queued", CreatedAt: now, UpdatedAt: now})
		send(conn, &sync.Frame{Type: sync.FrameEvents, Events: []sync.Event{{Seq: 1, Kind: sync.KindTask, TaskNo: "order_x_station_hot", At: now, Data: data}}})
		if f := read(conn); f.Type != sync.FrameAck || f.Cursor != 1 {
			t.Fatalf("got %+v, want ack 1", f)
		}
		var task struct {
			StoreID string `json:"store_id"`
		}
		if code := do(t, adminToken, "GET", node.base+"/v1/stores/"+a.id+"/tasks/order_x_station_hot", nil, &task); code != 200 || task.StoreID != a.id {
			t.Fatalf("got %d %+v, want the task in %s", code, task, a.id)
		}
		if code := do(t, adminToken, "GET", node.base+"/v1/stores/"+b.id+"/tasks/order_x_station_hot", nil, nil); code != 404 {
			t.Fatalf("got %d for the other store, want 404", code)
		}
	})
}
