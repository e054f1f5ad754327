package badger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Salvage: what Repair keeps of a damaged data dir. Every table file is
// read block by block (blocks that fail their checksum are skipped), listed
// in the MANIFEST or not; the memtable logs are replayed by Badger itself
// in a scratch dir (a log is read up to its first damaged entry). For each
// key the newest version found wins, deletions included. Tasks are the
// truth: their indexes and counts are built again from them, and the
// sequence counters move past everything seen and past the witness.

// salvageEntry is one version of a key found in a source.
type salvageEntry struct {
	key     []byte // without the version
	version uint64
	value   []byte
	deleted bool
}

// SalvageReport says what a repair kept and lost.
type SalvageReport struct {
	Tables, BadTables, BadBlocks int
	Logs, BadLogs                int
	Keys, Tasks                  int
	InValueLog                   int // newest versions held in the value log, not salvaged
	Problems                     []string
}

type salvager struct {
	dir     string
	scratch string
	rep     *SalvageReport
	best    map[string]uint64 // newest version of each key
}

// tablesIn lists the table files of a damaged dir, set aside ones too.
func tablesIn(dir string) []string {
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, unlistedDir)} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sst") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// eachTableEntry calls fn for every readable entry of a table file.
func (s *salvager) eachTableEntry(path string, count bool, fn func(salvageEntry)) {
	name, _ := filepath.Rel(s.dir, path)
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		if count {
			s.rep.BadTables++
			s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("%s: cannot open: %v", name, err))
		}
		return
	}
	var t *table.Table
	defer func() {
		if p := recover(); p != nil && count {
			s.rep.BadTables++
			s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("%s: unreadable (cut short or damaged)", name))
		}
		if t != nil {
			_ = t.MmapFile.Close(-1)
		} else {
			_ = mf.Close(-1)
		}
	}()
	t, err = table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead, Compression: options.Snappy, BlockSize: 4 << 10})
	if err != nil {
		t = nil
		if count {
			s.rep.BadTables++
			s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("%s: index unreadable: %v", name, firstLine(err)))
		}
		return
	}
	if count {
		s.rep.Tables++
	}
	blocks := t.KeySplits(math.MaxInt32, nil)
	it := t.NewIterator(0)
	defer it.Close()
	for i, start := range blocks {
		var end []byte
		if i+1 < len(blocks) {
			end = []byte(blocks[i+1])
		}
		it.Seek([]byte(start))
		n := 0
		for ; it.Valid(); it.Next() {
			k := it.Key()
			if end != nil && y.CompareKeys(k, end) >= 0 {
				break
			}
			n++
			vs := it.ValueCopy()
			uk := y.ParseKey(k)
			if bytes.HasPrefix(uk, []byte("!badger!")) {
				continue // Badger's own keys
			}
			if vs.Meta&2 != 0 {
				if count {
					s.rep.InValueLog++ // a value of 1 MiB or so: kept in the value log
				}
				continue
			}
			fn(salvageEntry{key: append([]byte(nil), uk...), version: y.ParseTs(k), value: vs.Value, deleted: vs.Meta&1 != 0})
		}
		if n == 0 && count {
			s.rep.BadBlocks++
		}
	}
}

// replayLogs has Badger replay copies of the memtable logs in a scratch dir
// of their own (no MANIFEST, no tables) and calls fn for each version.
func (s *salvager) replayLogs(fn func(salvageEntry)) error {
	entries, _ := os.ReadDir(s.dir)
	var logs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".mem") {
			logs = append(logs, e.Name())
		}
	}
	if len(logs) == 0 {
		return nil
	}
	scratch := filepath.Join(s.scratch, "logs")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return err
	}
	for _, name := range logs {
		if err := copyFile(filepath.Join(s.dir, name), filepath.Join(scratch, name)); err != nil {
			return err
		}
		s.rep.Logs++
	}
	o := Options{MemtableSize: 64 << 20}.withDefaults()
	db, err := bdg.Open(badgerOptions(scratch, o, false).WithLogger(nil))
	if err != nil {
		// A log Badger cannot read at all: try them one by one.
		if len(logs) == 1 {
			s.rep.BadLogs++
			s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("%s: unreadable: %s", logs[0], firstLine(err)))
			return nil
		}
		os.RemoveAll(scratch)
		for _, name := range logs {
			sub := &salvager{dir: s.dir, scratch: filepath.Join(s.scratch, "log-"+name), rep: &SalvageReport{}}
			if err := sub.replayOne(name, fn); err != nil {
				s.rep.BadLogs++
				s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("%s: unreadable: %s", name, firstLine(err)))
			}
		}
		return nil
	}
	defer db.Close()
	return eachVersion(db, fn)
}

func (s *salvager) replayOne(name string, fn func(salvageEntry)) error {
	if err := os.MkdirAll(s.scratch, 0o700); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(s.dir, name), filepath.Join(s.scratch, name)); err != nil {
		return err
	}
	o := Options{MemtableSize: 64 << 20}.withDefaults()
	db, err := bdg.Open(badgerOptions(s.scratch, o, false).WithLogger(nil))
	if err != nil {
		return err
	}
	defer db.Close()
	return eachVersion(db, fn)
}

func eachVersion(db *bdg.DB, fn func(salvageEntry)) error {
	return db.View(func(txn *bdg.Txn) error {
		opts := bdg.DefaultIteratorOptions
		opts.AllVersions = true
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			e := salvageEntry{key: item.KeyCopy(nil), version: item.Version(), deleted: item.IsDeletedOrExpired()}
			if !e.deleted {
				v, err := item.ValueCopy(nil)
				if err != nil {
					continue
				}
				e.value = v
			}
			fn(e)
		}
		return nil
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// salvage builds a new store in `to` from what is readable in the damaged
// dir `from`, using scratch for Badger's replay of the logs.
func salvage(from, to, scratch string, w *witnessState, opts Options) (*SalvageReport, error) {
	s := &salvager{dir: from, scratch: scratch, rep: &SalvageReport{}, best: map[string]uint64{}}
	tables := tablesIn(from)
	note := func(e salvageEntry) {
		if v, ok := s.best[string(e.key)]; !ok || e.version > v {
			s.best[string(e.key)] = e.version
		}
	}
	for _, p := range tables {
		s.eachTableEntry(p, true, note)
	}
	var logEntries []salvageEntry // the logs are small (a memtable each): keep them
	if err := s.replayLogs(func(e salvageEntry) { note(e); logEntries = append(logEntries, e) }); err != nil {
		return s.rep, fmt.Errorf("replay the memtable logs: %w", err)
	}

	db, err := bdg.Open(badgerOptions(to, opts, false))
	if err != nil {
		return s.rep, err
	}
	defer db.Close()
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	var ctr counters
	var tasks []gateway.Task
	keep := func(e salvageEntry) {
		k := string(e.key)
		if v, ok := s.best[k]; !ok || v != e.version {
			return
		}
		delete(s.best, k) // written once, newest version
		if e.deleted {
			return
		}
		switch {
		case bytes.Equal(e.key, metaTaskSeq):
			ctr.task = max(ctr.task, be64(e.value))
			return
		case bytes.Equal(e.key, metaEventSeq):
			ctr.event = max(ctr.event, be64(e.value))
			return
		case bytes.Equal(e.key, metaAuditSeq):
			ctr.audit = max(ctr.audit, be64(e.value))
			return
		case volatile(e.key), e.key[0] == spaceStatus, e.key[0] == spaceQueue, bytes.HasPrefix(e.key, key(spaceMeta, "count", "")):
			return // built again below
		case e.key[0] == spaceTask:
			var t gateway.Task
			if err := decodeGatewayTask(e.value, &t); err != nil {
				s.rep.Problems = append(s.rep.Problems, fmt.Sprintf("task %q: unreadable value", e.key[2:]))
				return
			}
			tasks = append(tasks, t)
			ctr.task = max(ctr.task, t.Seq)
		case e.key[0] == spaceAudit && len(e.key) == 10:
			ctr.audit = max(ctr.audit, binary.BigEndian.Uint64(e.key[2:]))
		case e.key[0] == spaceEvent && len(e.key) == 10:
			ctr.event = max(ctr.event, binary.BigEndian.Uint64(e.key[2:]))
		}
		if err := wb.Set(append([]byte(nil), e.key...), append([]byte(nil), e.value...)); err == nil {
			s.rep.Keys++
		}
	}
	for _, p := range tables {
		s.eachTableEntry(p, false, keep)
	}
	for _, e := range logEntries {
		keep(e)
	}
	// Indexes and counts, from the tasks.
	counts := map[storeprint.Status]uint64{}
	for _, t := range tasks {
		if !t.Status.Valid() {
			continue
		}
		counts[t.Status]++
		_ = wb.Set(seqKey(spaceStatus, t.Seq, string(t.Status)), []byte(t.TaskNo))
		if t.Status.Open() {
			_ = wb.Set(seqKey(spaceQueue, t.Seq, t.PrinterID), []byte(t.TaskNo))
		}
	}
	for _, st := range storeprint.Statuses {
		_ = wb.Set(statusCountKey(st), u64(counts[st]))
	}
	if w != nil {
		ctr.task, ctr.event, ctr.audit = max(ctr.task, w.Ctr.task), max(ctr.event, w.Ctr.event), max(ctr.audit, w.Ctr.audit)
	}
	for _, kv := range []struct {
		k []byte
		v []byte
	}{{metaTaskSeq, u64(ctr.task)}, {metaEventSeq, u64(ctr.event)}, {metaAuditSeq, u64(ctr.audit)}, {metaFormat, []byte{storeFormat}}, {metaCounted, []byte{1}}} {
		_ = wb.Set(kv.k, kv.v)
	}
	if err := wb.Flush(); err != nil {
		return s.rep, fmt.Errorf("write the repaired store: %w", err)
	}
	s.rep.Tasks = len(tasks)
	return s.rep, nil
}

func be64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
