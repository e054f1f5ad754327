package badger

import (
	"bufio"

	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint/gateway"
)

// A backup file is Badger's backup stream (every key's latest version at
// one moment) framed so that a file cut short or altered is refused:
//
//	"STOREPRINT-BACKUP 1\n" | Badger stream | trailer (JSON) |
//	trailer length (4 bytes, big-endian) | "SPBKEND1"
//
// The trailer says which store it is and when it was taken, and holds the
// stream's length and SHA-256.
const (
	backupMagic = "STOREPRINT-BACKUP 1\n"
	backupEnd   = "SPBKEND1"
)

// BackupInfo is a backup's trailer.
type BackupInfo struct {
	Format  int       `json:"format"`
	StoreID string    `json:"store_id"`
	TakenAt time.Time `json:"taken_at"`
	Version uint64    `json:"version"` // Badger's version of the newest entry
	Bytes   int64     `json:"bytes"`   // length of the Badger stream
	SHA256  string    `json:"sha256"`  // of the Badger stream
}

type countingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// Backup writes a consistent backup of the open store to w: Badger's
// backup stream reads every key at one moment while the gateway goes on.
func (d *DB) Backup(w io.Writer, storeID string) (*BackupInfo, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.WriteString(backupMagic); err != nil {
		return nil, err
	}
	cw := &countingWriter{w: bw, h: sha256.New()}
	at := d.opts.Now().UTC()
	v, err := d.db.Backup(cw, 0)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	// Badger's stream reads the newest commit, which may have been still
	// syncing: sync the log, from the writer, after everything it read.
	if err := d.exclusive(d.syncLog); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}

	info := &BackupInfo{Format: 1, StoreID: storeID, TakenAt: at, Version: v, Bytes: cw.n, SHA256: hex.EncodeToString(cw.h.Sum(nil))}
	t, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	bw.Write(t)
	bw.Write(binary.BigEndian.AppendUint32(nil, uint32(len(t))))
	bw.WriteString(backupEnd)
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return info, nil
}

// WriteBackup is Backup without the summary, as the gateway's HTTP server
// serves it.
func (d *DB) WriteBackup(w io.Writer, storeID string) error {
	_, err := d.Backup(w, storeID)
	return err
}

// BackupError is a backup file that cannot be restored: cut short,
// damaged, not a storeprint backup, or another store's.
type BackupError struct{ Message string }

func (e *BackupError) Error() string { return e.Message }

// ReadBackupInfo reads and checks a backup file's frame (not its stream).
func ReadBackupInfo(f io.ReaderAt, size int64) (*BackupInfo, error) {
	bad := func(why string) error { return &BackupError{"not a complete storeprint backup: " + why} }
	if size < int64(len(backupMagic)+12) {
		return nil, bad("too short")
	}
	head := make([]byte, len(backupMagic))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if string(head) != backupMagic {
		return nil, bad("it does not start as one")
	}
	tail := make([]byte, 12)
	if _, err := f.ReadAt(tail, size-12); err != nil {
		return nil, err
	}
	if string(tail[4:]) != backupEnd {
		return nil, bad("its end is missing (cut short?)")
	}
	n := int64(binary.BigEndian.Uint32(tail[:4]))
	if n > size-int64(len(backupMagic))-12 || n > 1<<20 {
		return nil, bad("its trailer is damaged")
	}
	t := make([]byte, n)
	if _, err := f.ReadAt(t, size-12-n); err != nil {
		return nil, err
	}
	var info BackupInfo
	if err := json.Unmarshal(t, &info); err != nil {
		return nil, bad("its trailer is damaged")
	}
	if info.Format != 1 || info.Bytes != size-12-n-int64(len(backupMagic)) {
		return nil, bad("its length does not match its trailer")
	}
	return &info, nil
}

// VerifyBackupFile checks the frame and the checksum of the backup file at
// path.
func VerifyBackupFile(path string) (*BackupInfo, error) {
	f, info, err := openBackup(path)
	if err != nil {
		return nil, err
	}
	return info, f.Close()
}

// openBackup opens the backup file at path and checks it whole
// (VerifyBackup).
func openBackup(path string) (*os.File, *BackupInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		var info *BackupInfo
		if info, err = VerifyBackup(f, fi.Size()); err == nil {
			return f, info, nil
		}
	}
	f.Close()
	return nil, nil, err
}

// VerifyBackup checks a backup file's frame and the checksum of its
// contents.
func VerifyBackup(f io.ReaderAt, size int64) (*BackupInfo, error) {
	info, err := ReadBackupInfo(f, size)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, int64(len(backupMagic)), info.Bytes)); err != nil {
		return nil, err
	}
	if hex.EncodeToString(h.Sum(nil)) != info.SHA256 {
		return nil, &BackupError{"the backup is damaged: its contents do not match its checksum"}
	}
	return info, nil
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	Info    *BackupInfo
	Tasks   uint64
	MovedTo string // where the data dir that was there went; empty if there was none

	lastEvent uint64 // the backup's newest outbox seq
}

// Restore replaces the store in dir with the backup in path. The data dir
// that was there is kept beside it (dir.before-restore-<time>). The
// restored store opens in the recovered state: tasks that were waiting
// when the backup was taken may have printed since, so the gateway holds
// them for a person. Its sequence counters move past those of the store it
// replaces, so the cloud never sees a number twice. The gateway must be
// stopped.
func Restore(dir, path, storeID string, opts Options) (*RestoreReport, error) {
	opts = opts.withDefaults()
	if err := probeLock(dir); err != nil {
		return nil, err
	}
	// The whole file is checked before anything is built from it, so that
	// a damaged backup is told apart from trouble building the store.
	f, info, err := openBackup(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if storeID != "" && info.StoreID != "" && info.StoreID != storeID {
		return nil, &BackupError{fmt.Sprintf("the backup is of store %q, this gateway is store %q", info.StoreID, storeID)}
	}
	old, _ := readWitness(dir) // the counters to move past, when readable
	tmp := filepath.Clean(dir) + ".restoring"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	rep := &RestoreReport{Info: info}
	if rep.lastEvent, err = load(tmp, io.NewSectionReader(f, int64(len(backupMagic)), info.Bytes), info, old, opts); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if rep.MovedTo, err = moveAside(dir, "before-restore"); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
		return nil, err
	}
	rec := &gateway.Recovery{Cause: fmt.Sprintf("restored from a backup taken at %s: tasks that were waiting then may have printed since", info.TakenAt.UTC().Format(time.RFC3339))}
	if old != nil && old.Ctr.event > rep.lastEvent {
		rec.LostEventsFrom, rec.LostEventsTo = rep.lastEvent+1, old.Ctr.event
	}
	n, err := finish(dir, rec, opts)
	rep.Tasks = n
	return rep, err
}

// load builds a store in dir from a backup stream, checking its hash, and
// returns the backup's newest outbox seq.
func load(dir string, r io.Reader, info *BackupInfo, old *witnessState, opts Options) (uint64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	db, err := bdg.Open(badgerOptions(dir, opts, false))
	if err != nil {
		return 0, err
	}
	h := sha256.New()
	if err := db.Load(io.TeeReader(r, h), 64); err != nil {
		db.Close()
		return 0, fmt.Errorf("load the backup: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != info.SHA256 {
		db.Close()
		return 0, errors.New("the backup is damaged: its contents do not match its checksum")
	}
	var lastEvent uint64
	err = db.Update(func(txn *bdg.Txn) error {
		if item, err := txn.Get(metaEventSeq); err == nil {
			b, _ := item.ValueCopy(nil)
			lastEvent = be64(b)
		}
		// The store's own record of its last commit and its witness
		// belong to the store the backup was taken from.
		for _, k := range [][]byte{metaCommit, metaWitness, metaRecovery} {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		if old == nil {
			return nil
		}
		for _, c := range []struct {
			k []byte
			v uint64
		}{{metaTaskSeq, old.Ctr.task}, {metaEventSeq, old.Ctr.event}, {metaAuditSeq, old.Ctr.audit}} {
			cur := uint64(0)
			if item, err := txn.Get(c.k); err == nil {
				b, _ := item.ValueCopy(nil)
				cur = be64(b)
			}
			if c.v > cur {
				if err := txn.Set(c.k, u64(c.v)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return lastEvent, err
}

// finish opens a store just built (restored or repaired), which starts its
// witness, and records the pending recovery. It returns the tasks stored.
func finish(dir string, rec *gateway.Recovery, opts Options) (uint64, error) {
	opts.MinFreeBytes = 1
	d, err := Open(dir, opts)
	if err != nil {
		return 0, err
	}
	rec.At = d.opts.Now()
	err = d.setRecovery(rec)
	n := d.cmt.Tasks
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// setRecovery records a recovery the gateway has yet to hold tasks for.
func (d *DB) setRecovery(r *gateway.Recovery) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = d.exclusive(func() error { return d.update(func(txn *bdg.Txn) error { return txn.Set(metaRecovery, b) }) })
	if err != nil {
		return fmt.Errorf("record recovery: %w", err)
	}
	d.recovery.Store(r)
	return nil
}

// moveAside renames dir to dir.<what>-<time> if it holds anything, and
// returns the new name.
func moveAside(dir, what string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "", os.Remove(dir)
	}
	to := fmt.Sprintf("%s.%s-%s", filepath.Clean(dir), what, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(dir, to); err != nil {
		return "", err
	}
	return to, nil
}
