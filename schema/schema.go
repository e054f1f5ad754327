package schema

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Migrations holds the numbered SQL migrations,
// NNNN_name.up.sql and NNNN_name.down.sql.
//
//go:embed migrations/*.sql
var Migrations embed.FS

// Up applies every migration not yet applied and returns the schema
// version. Concurrent callers are serialized by an advisory lock, so every
// node of a cluster may call it at start.
func Up(ctx context.Context, databaseURL string) (uint, error) {
	m, err := open(ctx, databaseURL)
	if err != nil {
		return 0, err
	}
	defer m.close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return 0, fmt.Errorf("migrate up: %w", err)
	}
	return m.version()
}

// Down reverts every migration. It destroys all data; tests and operators
// who mean it only.
func Down(ctx context.Context, databaseURL string) error {
	m, err := open(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// Version returns the applied schema version (0 when none) and whether a
// migration failed half-way (dirty), which needs a person.
func Version(ctx context.Context, databaseURL string) (version uint, dirty bool, err error) {
	m, err := open(ctx, databaseURL)
	if err != nil {
		return 0, false, err
	}
	defer m.close()
	version, dirty, err = m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("migration version: %w", err)
	}
	return version, dirty, nil
}

// Latest returns the highest version among the embedded migrations.
func Latest() (uint, error) {
	src, err := iofs.New(Migrations, "migrations")
	if err != nil {
		return 0, fmt.Errorf("read migrations: %w", err)
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return 0, fmt.Errorf("read migrations: %w", err)
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			return v, nil // no next migration: v is the last
		}
		v = next
	}
}

type migrator struct {
	*migrate.Migrate
}

// open connects with any connection string pgx accepts (URL or key=value)
// by handing golang-migrate a database/sql handle instead of a URL.
func open(ctx context.Context, databaseURL string) (*migrator, error) {
	if databaseURL == "" {
		return nil, errors.New("migrate: no database URL")
	}
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("migrate: database URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: connect to database: %w", err)
	}
	driver, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	src, err := iofs.New(Migrations, "migrations")
	if err != nil {
		driver.Close()
		return nil, fmt.Errorf("migrate: read migrations: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", driver)
	if err != nil {
		driver.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &migrator{m}, nil
}

func (m *migrator) version() (uint, error) {
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("migration version: %w", err)
	}
	if dirty {
		return v, fmt.Errorf("migration %d is dirty: it failed half-way and needs a person", v)
	}
	return v, nil
}

func (m *migrator) close() {
	// Close errors of a finished migration change nothing the caller can act on.
	_, _ = m.Close()
}
