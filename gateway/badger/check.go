package badger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/storeprint/storeprint/gateway"
)

// CheckResult is what Check found.
type CheckResult struct {
	Sound bool
	// Damage: the store would not start (see DamageError).
	Damage *DamageError
	// Recovery: the store would start in the recovered state: writes were
	// lost since it last ran.
	Recovery *gateway.Recovery
	// Pending: a recovery recorded earlier (a restore, a repair) whose
	// waiting tasks the gateway holds at its next start.
	Pending *gateway.Recovery
	Tasks   uint64
	Keys    uint64
	LastAt  time.Time // when the witness recorded the last commit
}

// Check verifies the store in dir without changing it: it opens a scratch
// copy (the tables linked, everything Badger may change copied) exactly as
// the gateway would at start, with everything that implies: every table
// read whole and verified, the logs replayed, everything stored added up
// and compared with the witness. The gateway must be stopped.
func Check(dir string, opts Options) (*CheckResult, error) {
	if err := probeLock(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, manifestFile)); errors.Is(err, os.ErrNotExist) {
		if in, err := inspect(dir); err != nil {
			var de *DamageError
			if errors.As(err, &de) {
				return &CheckResult{Damage: de}, nil
			}
			return nil, err
		} else if in.fresh {
			return nil, fmt.Errorf("there is no store in %s", dir)
		}
	}
	scratch, err := os.MkdirTemp("", "storeprint-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	if err := scratchCopy(dir, scratch); err != nil {
		return nil, fmt.Errorf("copy the data dir to check it: %w", err)
	}
	w, _ := readWitness(dir)
	opts.MinFreeBytes, opts.scratch = 1, true
	began := time.Now()
	d, err := Open(scratch, opts)
	if err != nil {
		var de *DamageError
		if errors.As(err, &de) {
			de.Dir = dir
			return &CheckResult{Damage: de}, nil
		}
		return nil, err
	}
	res := &CheckResult{Tasks: d.cmt.Tasks, Keys: d.cmt.Keys}
	if w != nil {
		res.LastAt = w.At
	}
	if r := d.Recovery(); r != nil && !r.Held {
		if r.At.Before(began) {
			res.Pending = r
		} else {
			res.Recovery = r
		}
	}
	res.Sound = res.Recovery == nil
	return res, d.Close()
}

// scratchCopy makes dir's store openable in scratch without touching dir:
// tables are immutable and the scratch store runs no compactions (which
// would delete, and so truncate, them), so they are linked; everything
// else is copied.
func scratchCopy(dir, scratch string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, sub := range []string{"", unlistedDir} {
		entries, err := os.ReadDir(filepath.Join(abs, sub))
		if err != nil {
			if sub != "" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		if sub != "" {
			if err := os.MkdirAll(filepath.Join(scratch, sub), 0o700); err != nil {
				return err
			}
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || name == "LOCK" {
				continue
			}
			from, to := filepath.Join(abs, sub, name), filepath.Join(scratch, sub, name)
			if strings.HasSuffix(name, ".sst") && runtime.GOOS != "windows" {
				if err := os.Symlink(from, to); err == nil {
					continue
				}
			}
			if err := copyFile(from, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// RepairResult says what Repair did.
type RepairResult struct {
	Check   *CheckResult
	Report  *SalvageReport // nil when nothing was salvaged
	MovedTo string         // where the damaged data dir was kept
	Tasks   uint64
}

// Repair makes the store in dir start again, keeping what is readable:
//
//   - a sound store is left alone;
//   - a store behind its witness (writes lost) is opened once, which
//     records the recovery: the gateway holds every waiting task at start;
//   - a damaged store is moved aside (dir.damaged-<time>, kept as it was)
//     and a new one is built from every table block and log entry that can
//     be read (see salvage), in the recovered state.
//
// The gateway must be stopped.
func Repair(dir string, opts Options) (*RepairResult, error) {
	opts = opts.withDefaults()
	chk, err := Check(dir, opts)
	if err != nil {
		return nil, err
	}
	res := &RepairResult{Check: chk, Tasks: chk.Tasks}
	if chk.Sound {
		return res, nil
	}
	if chk.Damage == nil {
		o := opts
		o.MinFreeBytes = 1
		d, err := Open(dir, o)
		if err != nil {
			return nil, err
		}
		res.Tasks = d.cmt.Tasks
		return res, d.Close()
	}
	w, _ := readWitness(dir)
	tmp := filepath.Clean(dir) + ".repairing"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), ".storeprint-salvage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	rep, err := salvage(dir, tmp, scratch, w, opts)
	res.Report = rep
	if err != nil {
		os.RemoveAll(tmp)
		return res, fmt.Errorf("salvage: %w", err)
	}
	if res.MovedTo, err = moveAside(dir, "damaged"); err != nil {
		return res, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return res, err
	}
	if err := syncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
		return res, err
	}
	cause := fmt.Sprintf("repaired from a damaged data dir (kept in %s): %s", res.MovedTo, chk.Damage.Problem)
	if len(rep.Problems) > 0 {
		cause += fmt.Sprintf("; unreadable: %s", strings.Join(rep.Problems, "; "))
	}
	if rep.InValueLog > 0 {
		cause += fmt.Sprintf("; %d large values in the value log were not kept (older versions of them may be)", rep.InValueLog)
	}
	if w != nil && uint64(rep.Tasks) < w.Cmt.Tasks {
		cause += fmt.Sprintf("; %d of the %d tasks the witness counted could not be read", w.Cmt.Tasks-uint64(rep.Tasks), w.Cmt.Tasks)
	}
	rec := &gateway.Recovery{Cause: cause}
	if w != nil && uint64(rep.Tasks) < w.Cmt.Tasks {
		rec.MissingTasks = int(w.Cmt.Tasks - uint64(rep.Tasks))
	}
	res.Tasks, err = finish(dir, rec, opts)
	return res, err
}
