package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// connect connects to the database at url for the test.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// tables lists the public tables of the database at url.
func tables(t *testing.T, url string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, url)
	rows, _ := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func TestUp(t *testing.T) {
	t.Parallel()
	t.Run("UpDownUp", func(t *testing.T) {
		t.Parallel()
		url := pgtest.NewEmptyDatabase(t)
		ctx := context.Background()
		latest, err := schema.Latest()
		if err != nil {
			t.Fatal(err)
		}
		v, err := schema.Up(ctx, url)
		if err != nil {
			t.Fatalf("first up: %v", err)
		}
		if v != latest {
			t.Fatalf("got version %d, want %d", v, latest)
		}
		want := []string{"tenants", "tenant_tokens", "stores", "gateways", "gateway_cursors", "printers",
			"cloud_orders", "print_tasks", "task_events", "receipts", "alerts", "downstream_cursors", "downstream", "audit_events",
			"dead_letters", "link_events", "cloudprnt_printers", "dashboard_answers", "link_replacements"}
		got := tables(t, url)
		for _, name := range want {
			if !got[name] {
				t.Errorf("after up: table %s missing", name)
			}
		}
		if err := schema.Down(ctx, url); err != nil {
			t.Fatalf("down: %v", err)
		}
		if got := tables(t, url); len(got) != 0 {
			t.Fatalf("after down: got tables %v, want none", got)
		}
		if v, dirty, err := schema.Version(ctx, url); err != nil || v != 0 || dirty {
			t.Fatalf("after down: got version %d dirty %v err %v, want 0 false nil", v, dirty, err)
		}
		if v, err := schema.Up(ctx, url); err != nil || v != latest {
			t.Fatalf("second up: got version %d err %v, want %d nil", v, err, latest)
		}
		if got := tables(t, url); len(got) != len(want) {
			t.Fatalf("after second up: got %d tables, want %d", len(got), len(want))
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		url := pgtest.NewDatabase(t) // already migrated
		v, err := schema.Up(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		if latest, _ := schema.Latest(); v != latest {
			t.Fatalf("got version %d, want %d", v, latest)
		}
	})
	t.Run("ErrBadURL", func(t *testing.T) {
		t.Parallel()
		if _, err := schema.Up(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"); err == nil {
			t.Fatal("got nil error for an unreachable database")
		}
	})
}

// TestUp_CitusReady checks the rule that lets the schema move to Citus:
// every primary key and unique constraint starts with store_id or
// tenant_id.
func TestUp_CitusReady(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	conn := connect(t, url)
	rows, _ := conn.Query(ctx, `
		SELECT c.conrelid::regclass::text, c.conname, a.attname
		FROM pg_constraint c
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype IN ('p', 'u') AND c.connamespace = 'public'::regnamespace
		  AND c.conrelid::regclass::text <> 'schema_migrations'`)
	type key struct{ table, name, first string }
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (key, error) {
		var k key
		return k, r.Scan(&k.table, &k.name, &k.first)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("found no keys")
	}
	for _, k := range keys {
		if k.first != "store_id" && k.first != "tenant_id" {
			t.Errorf("%s.%s starts with %s, want store_id or tenant_id", k.table, k.name, k.first)
		}
	}
}
