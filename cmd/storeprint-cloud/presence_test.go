package main

import (
	"context"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud"
	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/sync"
)

// Presence costs no write per ping: a node writes its links' last seen in
// one statement every cloud.PresenceEvery (here on demand), one row per
// link, so 10,000 links cost 10,000 rows every 30 s, about 333 a second.
// Row writes to gateways are counted by a trigger.
func TestSync_Presence(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDatabase(t)
	node := startCloud(t, dbURL, "127.0.0.1:0", func(m *Main) { m.PresenceEvery = time.Hour })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		CREATE TABLE presence_writes (rows bigint NOT NULL, statements bigint NOT NULL);
		INSERT INTO presence_writes VALUES (0, 0);
		CREATE FUNCTION count_row() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE presence_writes SET rows = rows + 1; RETURN NULL; END $$;
		CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE presence_writes SET statements = statements + 1; RETURN NULL; END $$;
		CREATE TRIGGER count_rows AFTER UPDATE ON gateways FOR EACH ROW EXECUTE FUNCTION count_row();
		CREATE TRIGGER count_statements AFTER UPDATE ON gateways FOR EACH STATEMENT EXECUTE FUNCTION count_statement();`); err != nil {
		t.Fatal(err)
	}
	writes := func() (rows, statements int) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT rows, statements FROM presence_writes`).Scan(&rows, &statements); err != nil {
			t.Fatal(err)
		}
		return rows, statements
	}

	// 20 gateways of one store, each with a link.
	const links, pings = 20, 10
	st := createStore(t, node.base, "t1", "s-presence")
	creds := []store{st}
	for len(creds) < links {
		var gw struct {
			GatewayID string `json:"gateway_id"`
			Token     string `json:"token"`
		}
		if code := do(t, adminToken, "POST", node.base+"/v1/admin/stores/"+st.id+"/gateways", nil, &gw); code != 201 {
			t.Fatalf("create gateway: %d", code)
		}
		creds = append(creds, store{id: st.id, gatewayID: gw.GatewayID, token: gw.Token})
	}
	url := "ws" + node.base[len("http"):] + sync.Path
	pongs := make(chan struct{}, links*pings)
	var conns []*websocket.Conn
	for _, c := range creds {
		h := map[string][]string{"Authorization": {"Bearer " + c.token}, sync.HeaderGateway: {c.gatewayID}}
		ws, _, err := websocket.DefaultDialer.Dial(url, h)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		hello, _ := sync.Encode(&sync.Frame{Type: sync.FrameHello, GatewayID: c.gatewayID, StoreID: c.id})
		if err := ws.WriteMessage(websocket.TextMessage, hello); err != nil {
			t.Fatal(err)
		}
		if _, b, err := ws.ReadMessage(); err != nil {
			t.Fatal(err)
		} else if f, err := sync.Decode(b); err != nil || f.Type != sync.FrameWelcome {
			t.Fatalf("got %s %v, want a welcome", b, err)
		}
		ws.SetPongHandler(func(string) error { pongs <- struct{}{}; return nil })
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		conns = append(conns, ws)
	}
	// Welcomed means recorded online.
	if _, err := conn.Exec(ctx, `UPDATE presence_writes SET rows = 0, statements = 0`); err != nil {
		t.Fatal(err)
	}
	for range pings {
		for _, ws := range conns {
			if err := ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range links * pings {
		<-pongs
	}
	if rows, statements := writes(); rows != 0 || statements != 0 {
		t.Fatalf("got %d rows in %d statements written for %d pings, want none", rows, statements, links*pings)
	}
	if err := node.m.Sync.WritePresence(ctx); err != nil {
		t.Fatal(err)
	}
	rows, statements := writes()
	if rows != links || statements != 1 {
		t.Fatalf("got %d rows in %d statements for one presence write, want %d in 1", rows, statements, links)
	}
	t.Logf("one presence write: %d rows in %d statement; at 10,000 links every %s: %.0f rows a second",
		rows, statements, cloud.PresenceEvery, 10000/cloud.PresenceEvery.Seconds())
	var fresh int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM gateways WHERE online AND last_seen > now() - interval '10 s'`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	if fresh != links {
		t.Fatalf("got %d gateways online and seen lately, want %d", fresh, links)
	}
}
