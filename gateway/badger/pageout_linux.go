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

// pageOutTables asks the kernel to reclaim the pages of the tables and
// write-ahead logs this process has mapped: compactions read every table
// through its mapping and write their new ones through it, and Badger
// writes its log through one, which leaves the store resident in the
// process. A table's pages are clean copies of the file, read again when
// needed. A log is written once, front to back: what a sync has written
// is never touched again until its memtable is written out and it is
// deleted, and a page still dirty is written back, as the sync would.
// Only the page the next commit appends to is read back in, one page a
// call, while a burst lasts. Left alone, the log of the memtable taking
// writes grew resident to the size of a memtable, and with the table
// written out beside it made the peak of a burst. MADV_PAGEOUT never
// discards data (a region the process unmapped and mapped again
// meanwhile is paged out, not cleared), and a kernel without it (before
// 5.4) just says no.
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
// pageOutTables pages out: the mappings of the tables and the logs in
// dir (an absolute path).
func pageOutRegions(maps io.Reader, dir string) []mapped {
	var out []mapped
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || filepath.Dir(fields[5]) != dir {
			continue
		}
		if name := filepath.Base(fields[5]); !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".sst") {
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
		out = append(out, mapped{uintptr(start), uintptr(end)})
	}
	return out
}
