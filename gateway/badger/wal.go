package badger

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	stdsync "sync"
)

// Badger's own sync (SyncWrites) costs two disk flushes a commit: the
// memtable's write-ahead log, and the value log, synced whether or not the
// commit wrote to it. The store writes no value to the value log (see
// valueThreshold) and syncs the write-ahead log itself, one flush a
// commit:
//
//   - Badger runs without SyncWrites, so a commit lands in the memtable
//     and in its log's mapped pages, not yet on disk.
//   - The syncer syncs the log (fdatasync on a descriptor of its own; on
//     Linux that writes back the pages written through the mapping), one
//     sync for every commit made since the last. Readers read the view of
//     the newest commit synced (see view), so they never see a commit
//     that is not on disk yet: nothing is printed, sent to the cloud or
//     answered from a write a power cut could still take back.
//   - Badger writes a commit whole into the newest log. When the memtable
//     is full it starts the next log file (numbered one up) and writes the
//     old memtable out as a table (synced) before removing the old log,
//     oldest first. So the log to sync is the newest: at each sync the
//     store looks for the next file and, when it is there, syncs the
//     old one once more and moves on.
//
// A data dir whose value log holds values (written by an earlier release,
// which put large values there) keeps Badger's own sync: value-log
// garbage collection rewrites those values and removes their old file
// within one call, which only Badger's own sync makes safe. Other systems
// than Linux keep it too: on Windows a second handle on Badger's log
// would stop Badger removing it, and elsewhere a sync of the file is not
// known to write back what was written through a mapping.
type walSync struct {
	dir string
	mu  stdsync.Mutex
	fid int      // the newest log's number
	f   *os.File // the newest log, for syncing only
}

// ownWALSync reports whether the store syncs Badger's log itself for the
// data dir (see walSync): on Linux, with an empty value log.
func ownWALSync(dir string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".vlog") && !emptyValueLog(filepath.Join(dir, e.Name())) {
			return false
		}
	}
	return true
}

// vlogHeaderSize is the header that starts every value-log file (a key id
// and an IV); entries follow it.
const vlogHeaderSize = 20

// emptyValueLog reports whether a value-log file holds no entry: nothing
// but zeros after its header (a file Badger made ready for writing and
// never wrote to is zeros to its end).
func emptyValueLog(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	off := int64(vlogHeaderSize)
	for {
		n, err := f.ReadAt(buf, off)
		if bytes.IndexFunc(buf[:n], func(r rune) bool { return r != 0 }) >= 0 {
			return false
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		off += int64(n)
	}
}

// openWALSync finds the newest log of an open Badger store.
func openWALSync(dir string) (*walSync, error) {
	w := &walSync{dir: dir}
	if err := w.find(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *walSync) path(fid int) string { return filepath.Join(w.dir, fmt.Sprintf("%05d.mem", fid)) }

// find opens the newest log in the directory.
func (w *walSync) find() error {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("find the write-ahead log: %w", err)
	}
	fid := -1
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".mem"); ok {
			if id, err := strconv.Atoi(n); err == nil && id > fid {
				fid = id
			}
		}
	}
	if fid < 0 {
		return fmt.Errorf("find the write-ahead log: no .mem file in %s", w.dir)
	}
	return w.open(fid)
}

func (w *walSync) open(fid int) error {
	f, err := os.Open(w.path(fid))
	if err != nil {
		return fmt.Errorf("open the write-ahead log: %w", err)
	}
	if w.f != nil {
		w.f.Close()
	}
	w.fid, w.f = fid, f
	return nil
}

// sync makes everything committed so far durable.
func (w *walSync) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if _, err := os.Stat(w.path(w.fid + 1)); err != nil {
			break
		}
		// Badger moved on to the next log: what others wrote to the old
		// one since the last sync goes to disk before it is let go.
		if err := syncData(w.f); err != nil {
			return fmt.Errorf("sync the write-ahead log: %w", err)
		}
		if err := w.open(w.fid + 1); err != nil {
			return err
		}
	}
	if _, err := os.Stat(w.path(w.fid)); err != nil {
		// Gone without a next one seen: Badger moved on more than once
		// (several logs written out meanwhile). Sync the old one and look.
		if err := syncData(w.f); err != nil {
			return fmt.Errorf("sync the write-ahead log: %w", err)
		}
		if err := w.find(); err != nil {
			return err
		}
	}
	if err := syncData(w.f); err != nil {
		return fmt.Errorf("sync the write-ahead log: %w", err)
	}
	return nil
}

func (w *walSync) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
