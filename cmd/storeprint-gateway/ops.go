package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/gateway/toml"
)

// ExitError ends the program with a status other than 1.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// check verifies the data dir offline: exit 0 sound, 1 damaged, 2 when it
// cannot be checked (the gateway is running).
func (m *Main) check() error {
	cfg, err := toml.Load(m.ConfigPath)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	m.Config = cfg
	// What check finds it prints; the scratch store's own log would only
	// repeat it about a copy.
	opts := storeOptions(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	out := m.Stdout
	if m.Repair {
		res, err := badger.Repair(cfg.DataDir, opts)
		if err != nil {
			return m.offlineError(err)
		}
		switch {
		case res.Check.Sound:
			fmt.Fprintf(out, "data dir %s is sound (%d tasks): nothing to repair\n", cfg.DataDir, res.Tasks)
		case res.Report == nil:
			fmt.Fprintf(out, "data dir %s: %s\nrecorded: the gateway holds every waiting task for a person at its next start (%d tasks kept)\n",
				cfg.DataDir, res.Check.Recovery.Cause, res.Tasks)
		default:
			r := res.Report
			fmt.Fprintf(out, "data dir %s repaired: %d tasks and %d keys kept from %d tables and %d logs; unreadable: %d tables, %d blocks, %d logs\n",
				cfg.DataDir, res.Tasks, r.Keys, r.Tables, r.Logs, r.BadTables, r.BadBlocks, r.BadLogs)
			for _, p := range r.Problems {
				fmt.Fprintf(out, "  %s\n", p)
			}
			fmt.Fprintf(out, "the damaged data dir is kept in %s\nthe gateway holds every waiting task for a person at its next start\n", res.MovedTo)
		}
		return nil
	}
	res, err := badger.Check(cfg.DataDir, opts)
	if err != nil {
		return m.offlineError(err)
	}
	switch {
	case res.Damage != nil:
		fmt.Fprintf(out, "DAMAGED: %s\n", res.Damage.Problem)
		for _, f := range res.Damage.Files {
			fmt.Fprintf(out, "  %s\n", filepath.Join(cfg.DataDir, f))
		}
		fmt.Fprintf(out, "The gateway will not start on it. Restore the latest backup (storeprint-gateway restore --config %s --in BACKUP)\n"+
			"or keep what is readable (storeprint-gateway check --config %s --repair).\n", m.ConfigPath, m.ConfigPath)
		return &ExitError{Code: 1, Err: errors.New("the data dir is damaged")}
	case res.Recovery != nil:
		fmt.Fprintf(out, "DAMAGED: %s\n", res.Recovery.Cause)
		if res.Recovery.MissingTasks > 0 {
			fmt.Fprintf(out, "  %d tasks are missing and cannot be listed\n", res.Recovery.MissingTasks)
		}
		fmt.Fprintf(out, "The gateway would start in the recovered state, holding every waiting task for a person;\n"+
			"restoring the latest backup may bring the missing writes back (storeprint-gateway restore --config %s --in BACKUP).\n", m.ConfigPath)
		return &ExitError{Code: 1, Err: errors.New("writes were lost from the data dir")}
	}
	fmt.Fprintf(out, "data dir %s is sound: %d tasks, %d keys, every table verified", cfg.DataDir, res.Tasks, res.Keys)
	if !res.LastAt.IsZero() {
		fmt.Fprintf(out, ", last commit %s", res.LastAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintln(out)
	if res.Pending != nil {
		fmt.Fprintf(out, "pending: %s; the gateway holds every waiting task for a person at its next start\n", res.Pending.Cause)
	}
	return nil
}

func (m *Main) offlineError(err error) error {
	var locked *badger.LockedError
	if errors.As(err, &locked) {
		return &ExitError{Code: 2, Err: fmt.Errorf("%w: stop it first (a backup can be taken while it runs)", err)}
	}
	var low *badger.DiskLowError
	if errors.As(err, &low) {
		return err
	}
	return &ExitError{Code: 2, Err: err}
}

// restore replaces the data dir with a backup, offline.
func (m *Main) restore() error {
	cfg, err := toml.Load(m.ConfigPath)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	m.Config = cfg
	rep, err := badger.Restore(cfg.DataDir, m.In, cfg.StoreID, storeOptions(cfg, m.logger()))
	var bad *badger.BackupError
	switch {
	case errors.As(err, &bad):
		return &ExitError{Code: 1, Err: err} // as its help says: not complete, or not this store's
	case err != nil:
		return m.offlineError(err)
	}
	fmt.Fprintf(m.Stdout, "restored %s from %s (taken %s): %d tasks\n", cfg.DataDir, m.In, rep.Info.TakenAt.Format(time.RFC3339), rep.Tasks)
	if rep.MovedTo != "" {
		fmt.Fprintf(m.Stdout, "the data dir that was there is kept in %s\n", rep.MovedTo)
	}
	fmt.Fprintln(m.Stdout, "the gateway holds every task that was waiting for a person at its next start: they may have printed after the backup")
	return nil
}

// backup writes a consistent backup to --out: through the running
// gateway's GET /v1/backup (an API token from the config), or, when no
// gateway answers, from the data dir itself.
func (m *Main) backup(ctx context.Context) error {
	cfg, err := toml.Load(m.ConfigPath)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	m.Config = cfg
	url := m.GatewayURL
	if url == "" {
		url = "http://" + localAddr(cfg.Listen)
	}
	tmp := m.Out + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	how, err := m.backupOnline(ctx, url, cfg.APITokens[0], f)
	if isRefused(err) {
		f.Truncate(0)
		f.Seek(0, io.SeekStart)
		how, err = "from the data dir (no gateway answered at "+url+")", m.backupOffline(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	info, err := badger.VerifyBackupFile(tmp)
	if err != nil {
		return fmt.Errorf("the backup is not complete: %w", err)
	}
	if err := os.Rename(tmp, m.Out); err != nil {
		return err
	}
	fi, err := os.Stat(m.Out)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "backup of store %s taken %s %s: %s (%d bytes)\n", info.StoreID, info.TakenAt.Format(time.RFC3339), how, m.Out, fi.Size())
	return nil
}

func (m *Main) backupOnline(ctx context.Context, url, token string, w io.Writer) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(url, "/")+"/v1/backup", nil)
	if err != nil {
		return "", fmt.Errorf("--gateway: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", fmt.Errorf("the gateway at %s answered %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", fmt.Errorf("read the backup from %s: %w", url, err)
	}
	return "through the running gateway at " + url, nil
}

func (m *Main) backupOffline(w io.Writer) error {
	o := storeOptions(m.Config, m.logger())
	o.MinFreeBytes = 1
	db, err := badger.Open(m.Config.DataDir, o)
	if err != nil {
		var locked *badger.LockedError
		if errors.As(err, &locked) {
			return fmt.Errorf("%w, but it did not answer at its listen address; pass --gateway URL", err)
		}
		return m.storeError(err)
	}
	_, err = db.Backup(w, m.Config.StoreID)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// isRefused: nothing listens at the gateway's address.
func isRefused(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// localAddr turns a listen address into one to dial on this machine.
func localAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
