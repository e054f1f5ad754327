package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

// DB is a pool of connections to the cloud's database.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database at url (a postgres:// URL or key=value
// string) and checks that it answers.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error may quote the URL and its password.
		return nil, fmt.Errorf("open database: the database URL is not valid")
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		registerColumns(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := &DB{pool: pool}
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes every connection.
func (db *DB) Close() {
	db.pool.Close()
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", interpret(err))
	}
	return nil
}

// tx runs fn in a transaction and commits it if fn returns nil.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", interpret(err))
	}
	defer tx.Rollback(ctx) // after Commit: a no-op
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", interpret(err))
	}
	return nil
}

// PostgreSQL error codes the adapter translates.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeCheckViolation      = "23514"
	codeNotNullViolation    = "23502"
	codeInsufficientPriv    = "42501"
	codeUntranslatableChar  = "22P05" // untranslatable_character
	codeInvalidText         = "22P02" // invalid_text_representation
	codeBadEncoding         = "22021" // character_not_in_repertoire: a NUL or invalid UTF-8 in a text value
	codeBadEscape           = "22025" // invalid_escape_sequence
	codeStringTooLong       = "22001" // string_data_right_truncation
)

// interpret translates a driver error into a coded cloud error, once, for
// every query of the adapter. Callers wrap the result with context and
// replace a generic message where they know better.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var ce *storeprint.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &storeprint.Error{Code: storeprint.ENOTFOUND, Message: "not found"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUniqueViolation:
			return wrapCoded(storeprint.ECONFLICT, "already exists", err)
		case codeForeignKeyViolation:
			return wrapCoded(storeprint.ENOTFOUND, "a referenced record does not exist", err)
		case codeCheckViolation, codeNotNullViolation, codeInvalidText:
			return wrapCoded(storeprint.EINVALID, "a value is not acceptable: "+pgErr.Message, err)
		case codeBadEncoding, codeUntranslatableChar, codeBadEscape, codeStringTooLong:
			return wrapCoded(storeprint.EINVALID, "a value holds characters that cannot be stored (a NUL, invalid UTF-8 or an over-long text)", err)
		case codeInsufficientPriv:
			return wrapCoded(storeprint.EFORBIDDEN, pgErr.Message, err)
		}
		return err
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connectErr) || pgconn.Timeout(err) {
		return wrapCoded(storeprint.EUNAVAILABLE, "database unavailable", err)
	}
	return err
}

// codedError is a cloud.Error that keeps the driver error for logs.
type codedError struct {
	coded *storeprint.Error
	err   error
}

func wrapCoded(code, msg string, err error) error {
	return &codedError{coded: &storeprint.Error{Code: code, Message: msg}, err: err}
}

func (e *codedError) Error() string   { return e.coded.Error() + ": " + e.err.Error() }
func (e *codedError) Unwrap() []error { return []error{e.coded, e.err} }

// isNoRows reports whether err means a query found nothing.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// isUniqueViolation says whether err is PostgreSQL's unique violation.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation
}

// audit writes one audit event in tx. before and after are marshalled to
// JSON; nil is stored as NULL.
func audit(ctx context.Context, tx pgx.Tx, a *cloud.Actor, note cloud.Note, tenantID, storeID string, action storeprint.AuditAction, resource string, before, after any) error {
	b, err := jsonOrNil(before)
	if err != nil {
		return err
	}
	af, err := jsonOrNil(after)
	if err != nil {
		return err
	}
	var store *string
	if storeID != "" {
		store = &storeID
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO audit_events (tenant_id, audit_id, store_id, source, actor, operator, action, resource, reason, before, after, at)
		VALUES ($1, $2, $3, 'cloud', $4, $5, $6, $7, $8, $9, $10, now())`,
		tenantID, "cloud:"+cloud.RandomID(16), store, a.String(), note.Operator, action, resource, note.Reason, b, af)
	if err != nil {
		return fmt.Errorf("write audit event: %w", interpret(err))
	}
	return nil
}

// validator is what an admin's change checks before it is made.
type validator interface{ Validate() error }

// requireAdmin returns the context's actor if it holds the admin token,
// once each of vs (what the change writes, then its note) is valid: the
// checks every change an admin makes starts with, in this order.
func requireAdmin(ctx context.Context, vs ...validator) (*cloud.Actor, error) {
	a, err := cloud.RequireAdmin(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func jsonOrNil(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode audit state: %w", err)
	}
	s := string(b)
	return &s, nil
}

// notify sends a PostgreSQL notification, delivered on commit.
func notify(ctx context.Context, tx pgx.Tx, channel, payload string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, interpret(err))
	}
	return nil
}

// stmt builds a statement's arguments: arg adds one and returns its
// placeholder. Filters that an actor or a request may leave out are
// written into the SQL only when present, never as "$n IS NULL OR col =
// $n": pgx caches each statement, and PostgreSQL's generic plan for such
// a catch-all filter scans the whole table.
type stmt struct {
	args []any
}

func (q *stmt) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// tenant is the actor's tenant filter on col: nothing for the admin (every
// tenant), "AND col = $n" for a tenant actor.
func (q *stmt) tenant(a *cloud.Actor, col string) string {
	t, scoped := a.TenantScope()
	if !scoped {
		return ""
	}
	return " AND " + col + " = " + q.arg(t)
}
