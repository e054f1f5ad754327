package badger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// File names in a data dir besides Badger's own (MANIFEST, KEYREGISTRY,
// *.sst, *.mem, *.vlog, DISCARD, LOCK).
const (
	witnessFile  = "storeprint.witness"
	unlistedDir  = "unlisted-tables" // tables the MANIFEST does not list, kept aside at start
	manifestFile = "MANIFEST"
)

// inspection is what a data dir holds before Badger opens it.
type inspection struct {
	fresh    bool     // nothing of a store: a new data dir
	tables   []uint64 // tables the MANIFEST lists, each read and verified
	unlisted []string // .sst files the MANIFEST does not list
	mems     []string // write-ahead logs of memtables not yet written as tables
	memBytes int64    // disk space those logs hold
	torn     bool     // the MANIFEST ends in a partial entry
}

// inspect checks a data dir before Badger opens it, for the damage Badger
// would not notice or would not survive: a missing or cut MANIFEST (Badger
// starts empty and deletes every table it does not list), a table missing,
// cut short (Badger panics) or with a damaged block (Badger skips the table
// and goes on without its data). Every table the MANIFEST lists is read
// whole and its checksums verified.
func inspect(dir string) (*inspection, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &inspection{fresh: true}, nil
		}
		return nil, fmt.Errorf("read data dir: %w", err)
	}
	in := &inspection{}
	var ssts, others []string
	hasManifest := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == manifestFile:
			hasManifest = true
		case strings.HasSuffix(name, ".sst"):
			ssts = append(ssts, name)
		case strings.HasSuffix(name, ".mem"):
			in.mems = append(in.mems, name)
			n, err := allocatedBytes(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", name, err)
			}
			in.memBytes += n
		case strings.HasSuffix(name, ".vlog"), name == "KEYREGISTRY", name == witnessFile:
			others = append(others, name)
		}
	}
	if !hasManifest {
		if len(ssts)+len(in.mems)+len(others) == 0 {
			in.fresh = true
			return in, nil
		}
		files := append(append(append([]string{}, ssts...), in.mems...), others...)
		sort.Strings(files)
		return nil, damaged(dir, "the MANIFEST, which lists the store's tables, is missing, but the data dir holds the store's other files; "+
			"started this way the store would be empty and delete them", append([]string{manifestFile}, files...)...)
	}
	mf, torn, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	in.torn = torn
	listed := map[uint64]bool{}
	var problems []string
	var bad []string
	for id, tm := range mf.Tables {
		listed[id] = true
		name := filepath.Base(table.NewFilename(id, dir))
		if err := verifyTable(filepath.Join(dir, name), tm.Compression); err != nil {
			bad = append(bad, name)
			problems = append(problems, name+": "+err.Error())
			continue
		}
		in.tables = append(in.tables, id)
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		sort.Strings(problems)
		return nil, damagedf(dir, bad, "%d of the %d tables the MANIFEST lists cannot be read whole: %s", len(bad), len(mf.Tables), strings.Join(problems, "; "))
	}
	for _, name := range ssts {
		id, ok := table.ParseFileID(name)
		if !ok || !listed[id] {
			in.unlisted = append(in.unlisted, name)
		}
	}
	sort.Slice(in.tables, func(i, j int) bool { return in.tables[i] < in.tables[j] })
	sort.Strings(in.unlisted)
	sort.Strings(in.mems)
	return in, nil
}

// readManifest replays the MANIFEST without changing it. torn reports a
// partial entry at its end, which Badger would cut off.
func readManifest(dir string) (bdg.Manifest, bool, error) {
	path := filepath.Join(dir, manifestFile)
	f, err := os.Open(path)
	if err != nil {
		return bdg.Manifest{}, false, damagedf(dir, []string{manifestFile}, "the MANIFEST cannot be read: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return bdg.Manifest{}, false, fmt.Errorf("read MANIFEST: %w", err)
	}
	o := bdg.DefaultOptions(dir).WithLogger(nil)
	mf, end, err := replayManifest(f, o)
	if err != nil {
		return bdg.Manifest{}, false, damagedf(dir, []string{manifestFile}, "the MANIFEST, which lists the store's tables, is damaged: %v", err)
	}
	return mf, end < fi.Size(), nil
}

func replayManifest(f *os.File, o bdg.Options) (mf bdg.Manifest, end int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("unreadable: %v", firstLine(p))
		}
	}()
	return bdg.ReplayManifestFile(f, 0, o)
}

// verifyTable reads a table whole, verifying its index and every block's
// checksum. A table cut short or damaged makes Badger's own reader panic;
// here that is an error.
func verifyTable(path string, c options.CompressionType) (err error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("missing")
		}
		return err
	}
	if fi.Size() < 8 {
		return fmt.Errorf("cut short (%d bytes)", fi.Size())
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open: %v", err)
	}
	var t *table.Table
	defer func() {
		if recover() != nil {
			err = errors.New("cut short or damaged: its index cannot be read")
		}
		if t != nil {
			_ = t.MmapFile.Close(-1) // never DecrRef: that deletes the file
		} else {
			_ = mf.Close(-1) // OpenTable closes it on some errors; closing again only fails
		}
	}()
	opts := table.Options{ReadOnly: true, ChkMode: options.OnTableRead, Compression: c, BlockSize: 4 << 10}
	t, err = table.OpenTable(mf, opts)
	if err != nil {
		return fmt.Errorf("checksum mismatch or bad structure: %v", firstLine(err))
	}
	return nil
}

func firstLine(v any) string {
	s := fmt.Sprint(v)
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// setAside moves the tables the MANIFEST does not list out of Badger's way
// (Badger deletes them at start) into dir/unlisted-tables. After a crash
// between writing a table and listing it they hold nothing the logs do not;
// after damage to the MANIFEST they may hold the only copy, for Repair.
func setAside(dir string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	to := filepath.Join(dir, unlistedDir)
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(to, n)); err != nil {
			return err
		}
	}
	if err := syncDir(to); err != nil {
		return err
	}
	return syncDir(dir)
}

// setAsideTables lists what an earlier start set aside.
func setAsideTables(dir string) []string {
	entries, err := os.ReadDir(filepath.Join(dir, unlistedDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sst") {
			out = append(out, filepath.Join(unlistedDir, e.Name()))
		}
	}
	return out
}
