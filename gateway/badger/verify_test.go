package badger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/gateway/badger"
	"github.com/storeprint/storeprint/gateway/badger/badgertest"
)

func addTasks(t *testing.T, dir string, from, n int) {
	t.Helper()
	db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		err := db.Update(context.Background(), func(tx gateway.Tx) error {
			return tx.PutTask(newTask(tx, fmt.Sprintf("t%04d", i), "p1"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_Witness(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addTasks(t, dir, 0, 5)
		db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if r := db.Recovery(); r != nil {
			t.Fatalf("a whole store opened recovered: %+v", r)
		}
	})

	t.Run("Behind", func(t *testing.T) {
		t.Parallel()
		dir, old := t.TempDir(), t.TempDir()
		addTasks(t, dir, 0, 5)
		badgertest.CopyTree(t, dir, old)
		addTasks(t, dir, 5, 3)
		// The old data with the newer witness: the last writes are gone.
		b, err := os.ReadFile(filepath.Join(dir, "storeprint.witness"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, "storeprint.witness"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		// No memtable log is left that could have lost them at its end:
		// the log was deleted. Damage, naming the logs; the way out keeps
		// what is readable and says what is gone.
		_, err = badger.Open(old, badger.Options{MinFreeBytes: 1})
		var de *badger.DamageError
		if !errors.As(err, &de) || !strings.Contains(de.Error(), "*.mem") || !strings.Contains(de.Problem, "3 commits behind its witness") {
			t.Fatalf("got %v, want damage naming the memtable logs", err)
		}
		if _, err := badger.Repair(old, badger.Options{MinFreeBytes: 1}); err != nil {
			t.Fatal(err)
		}
		db, err := badger.Open(old, badger.Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		r := db.Recovery()
		if r == nil || r.MissingTasks != 3 || r.Held || !strings.Contains(r.Cause, "behind its witness") {
			t.Fatalf("got recovery %+v, want 3 tasks missing, not held yet", r)
		}
		// No sequence number is used twice.
		_ = db.Update(context.Background(), func(tx gateway.Tx) error {
			if seq := tx.NextTaskSeq(); seq != 9 {
				t.Errorf("next task seq %d after recovery, want 9 (past the witness's 8)", seq)
			}
			return errors.New("discard")
		})
		if err := db.MarkHeld(0); err != nil {
			t.Fatal(err)
		}
		if r := db.Recovery(); r == nil || !r.Held {
			t.Fatalf("got %+v after MarkHeld", r)
		}
	})

	t.Run("WitnessMissing", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addTasks(t, dir, 0, 2)
		if err := os.Remove(filepath.Join(dir, "storeprint.witness")); err != nil {
			t.Fatal(err)
		}
		db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if r := db.Recovery(); r == nil || !strings.Contains(r.Cause, "witness file") {
			t.Fatalf("got %+v, want a recovery saying the witness is missing", r)
		}
	})

	t.Run("ErrManifestMissing", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addTasks(t, dir, 0, 2)
		if err := os.Remove(filepath.Join(dir, "MANIFEST")); err != nil {
			t.Fatal(err)
		}
		_, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
		var de *badger.DamageError
		if !errors.As(err, &de) || de.Files[0] != "MANIFEST" {
			t.Fatalf("got %v, want a DamageError naming the MANIFEST", err)
		}
		// The store's other files are still there for a repair.
		if _, err := os.Stat(filepath.Join(dir, "storeprint.witness")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("UnlistedTableRemovedWhenWhole", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		addTasks(t, dir, 0, 50)
		ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		if len(ssts) == 0 {
			t.Fatal("no table after a clean close")
		}
		b, err := os.ReadFile(ssts[0])
		if err != nil {
			t.Fatal(err)
		}
		// A table written and never listed, as after a crash between the two.
		if err := os.WriteFile(filepath.Join(dir, "999999.sst"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if r := db.Recovery(); r != nil {
			t.Fatalf("got recovery %+v, want a whole store", r)
		}
		for _, p := range []string{filepath.Join(dir, "999999.sst"), filepath.Join(dir, "unlisted-tables")} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: got %v, want it gone", p, err)
			}
		}
	})
}

func TestDB_Backup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addTasks(t, dir, 0, 20)
	db, err := badger.Open(dir, badger.Options{MinFreeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info, err := db.Backup(&buf, "store-1")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	t.Run("OK", func(t *testing.T) {
		got, err := badger.VerifyBackup(bytes.NewReader(b), int64(len(b)))
		if err != nil || got.SHA256 != info.SHA256 || got.StoreID != "store-1" {
			t.Fatalf("got %+v %v", got, err)
		}
		path := filepath.Join(t.TempDir(), "b")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(t.TempDir(), "data")
		rep, err := badger.Restore(target, path, "store-1", badger.Options{MinFreeBytes: 1})
		if err != nil || rep.Tasks != 20 {
			t.Fatalf("restore: got %+v %v, want 20 tasks", rep, err)
		}
		db, err := badger.Open(target, badger.Options{MinFreeBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if r := db.Recovery(); r == nil || r.Held || !strings.Contains(r.Cause, "restored from a backup") {
			t.Fatalf("restored store: recovery %+v, want one pending", r)
		}
		n := 0
		_ = db.View(context.Background(), func(tx gateway.ReadTx) error { n, _ = tx.Count(storeprint.StatusQueued); return nil })
		if n != 20 {
			t.Fatalf("got %d queued tasks after the restore, want 20", n)
		}
	})
	t.Run("ErrOtherStore", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "b")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := badger.Restore(filepath.Join(t.TempDir(), "data"), path, "store-2", badger.Options{MinFreeBytes: 1}); err == nil || !strings.Contains(err.Error(), "store-1") {
			t.Fatalf("got %v, want a refusal naming the backup's store", err)
		}
	})
	t.Run("ErrDamaged", func(t *testing.T) {
		cut := b[:len(b)-100]
		if _, err := badger.VerifyBackup(bytes.NewReader(cut), int64(len(cut))); err == nil {
			t.Error("a backup cut short was accepted")
		}
		flipped := append([]byte(nil), b...)
		flipped[len(flipped)/2] ^= 1
		if _, err := badger.VerifyBackup(bytes.NewReader(flipped), int64(len(flipped))); err == nil {
			t.Error("a backup with a byte changed was accepted")
		}
	})
}

func FuzzReadBackupInfo(f *testing.F) {
	f.Add([]byte("STOREPRINT-BACKUP 1\n" + `{"format":1,"bytes":0}` + "\x00\x00\x00\x16SPBKEND1"))
	f.Add([]byte("STOREPRINT-BACKUP 1\nSPBKEND1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := badger.ReadBackupInfo(bytes.NewReader(b), int64(len(b)))
		if err == nil && (info.Bytes < 0 || info.Bytes > int64(len(b))) {
			t.Fatalf("accepted a stream of %d bytes in a file of %d", info.Bytes, len(b))
		}
	})
}
