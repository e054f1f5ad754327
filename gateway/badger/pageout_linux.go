package badger

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pageOutTables asks the kernel to reclaim the pages of the tables this
// process has mapped, and of the write-ahead logs before the newest:
// compactions read every table through its mapping and write their new
// ones through it, and Badger writes its log through one, which leaves
// the store resident in the process. A table's pages are clean copies of
// the file, read again when needed. A log before the newest is only
// waiting for its memtable to be written out as a table; a page of it
// still dirty (not yet synced) is written back, as the sync would. The
// newest log is left alone: it is being written, and paging out what its
// next commit writes to would cost a read and a second write of the page.
// MADV_PAGEOUT never discards data (a region the process unmapped and
// mapped again meanwhile is paged out, not cleared), and a kernel without
// it (before 5.4) just says no.
func pageOutTables(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	for _, r := range pageOutRegions(f, abs) {
		// The address is the kernel's, not Go memory: pass it as a number.
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_PAGEOUT)
	}
}

// mapped is a region of the process's address space.
type mapped struct{ start, end uintptr }

// pageOutRegions reads /proc/self/maps and returns the regions
// pageOutTables pages out: the mappings of the tables in dir (an
// absolute path), and of its logs but the newest.
func pageOutRegions(maps io.Reader, dir string) []mapped {
	type region struct {
		mapped
		log int // the log's number; -1 for a table
	}
	var regions []region
	newest := -1
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || filepath.Dir(fields[5]) != dir {
			continue
		}
		name := filepath.Base(fields[5])
		log, isLog := strings.CutSuffix(name, ".mem")
		if !isLog && !strings.HasSuffix(name, ".sst") {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		r := region{mapped: mapped{uintptr(start), uintptr(end)}, log: -1}
		if isLog {
			n, err := strconv.Atoi(log)
			if err != nil {
				continue
			}
			r.log, newest = n, max(newest, n)
		}
		regions = append(regions, r)
	}
	var out []mapped
	for _, r := range regions {
		if r.log < 0 || r.log != newest {
			out = append(out, r.mapped)
		}
	}
	return out
}
