package schema_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/schema"
)

// Stepping down past version 13 copies the gateways' accepted receipt
// events into receipts, where earlier versions read every receipt: the
// first of each step, none of a dead letter, the table's own rows kept.
func TestDown_ReceiptEvents(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `
		INSERT INTO tenants (tenant_id, name) VALUES ('acme', 'Acme');
		INSERT INTO stores (store_id, tenant_id, name) VALUES ('s1', 'acme', 'One');
		INSERT INTO task_events (store_id, gateway_id, seq, kind, task_no, at, data, received_at) VALUES
			('s1', 'g1', 1, 'receipt', 'order_a_station_hot', '2026-09-23 12:00:01Z',
			 '{"task_no":"order_a_station_hot","attempt":1,"state":"prepared","printer_id":"hot-1","process_id":"0001","at":"2026-09-23T12:00:01.5Z"}', '2026-09-23 12:01:00Z'),
			('s1', 'g1', 2, 'receipt', 'order_a_station_hot', '2026-09-23 12:00:02Z',
			 '{"task_no":"order_a_station_hot","attempt":1,"state":"printed","printer_id":"hot-1","payload_sha256":"ab","job_id":"7","reprint":true,"at":"0001-01-01T00:00:00Z"}', '2026-09-23 12:01:00Z'),
			('s1', 'g1', 3, 'receipt', 'order_a_station_hot', '2026-09-23 12:00:03Z',
			 '{"task_no":"order_a_station_hot","attempt":1,"state":"prepared","printer_id":"hot-2","at":"2026-09-23T12:00:03Z"}', '2026-09-23 12:02:00Z'),
			('s1', 'g2', 1, 'receipt', 'order_a_station_hot', '2026-09-23 12:00:04Z',
			 '{"task_no":"order_a_station_hot","attempt":2,"state":"prepared","printer_id":"hot-1","at":"2026-09-23T12:00:04Z"}', '2026-09-23 12:01:30Z'),
			('s1', 'g1', 4, 'task', 'order_a_station_hot', '2026-09-23 12:00:05Z', '{"task_no":"order_a_station_hot"}', '2026-09-23 12:01:00Z'),
			('s1', 'g1', 5, 'receipt', 'order_b_station_hot', '2026-09-23 12:00:06Z',
			 '{"task_no":"order_b_station_hot","attempt":1,"state":"submitted","printer_id":"hot-1","at":"2026-09-23T12:00:06Z"}', '2026-09-23 12:01:00Z');
		INSERT INTO dead_letters (store_id, gateway_id, seq, wire_seq, kind, task_no, reason)
			VALUES ('s1', 'g2', 1, 1, 'receipt', 'order_a_station_hot', 'belongs to gateway g1');
		INSERT INTO receipts (store_id, task_no, attempt, state, printer_id, at, gateway_id, seq)
			VALUES ('s1', 'order_b_station_hot', 1, 'submitted', 'snap-1', '2026-09-23 11:00:00Z', 'g1', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := migrator(t, url).Migrate(12); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `
		SELECT task_no || ':' || attempt || ':' || state || ' ' || printer_id || ' ' || payload_sha256 || ' ' || process_id
		       || ' ' || job_id || ' ' || reprint || ' ' || to_char(at AT TIME ZONE 'UTC', 'HH24:MI:SS.MS') || ' ' || gateway_id || '/' || seq
		FROM receipts ORDER BY task_no, attempt, state`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"order_a_station_hot:1:prepared hot-1  0001  false 12:00:01.500 g1/1",
		"order_a_station_hot:1:printed hot-1 ab  7 true 12:00:02.000 g1/2",
		"order_b_station_hot:1:submitted snap-1    false 11:00:00.000 g1/0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got receipts\n%q\nwant\n%q", got, want)
	}
}

// migrator is golang-migrate on the embedded migrations, for steps that
// schema does not offer.
func migrator(t *testing.T, url string) *migrate.Migrate {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := migratepgx.WithInstance(stdlib.OpenDB(*cfg), &migratepgx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := iofs.New(schema.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
