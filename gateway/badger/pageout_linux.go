package badger

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pageOutTables asks the kernel to reclaim the pages of the tables this
// process has mapped, once a burst is over: compactions read every table
// through its mapping, which leaves the whole store resident in the
// process. The pages are clean copies of the files; reading them again
// faults them back in. MADV_PAGEOUT never discards data (a region the
// process unmapped and mapped again meanwhile is paged out, not
// cleared), and a kernel without it (before 5.4) just says no.
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
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasSuffix(fields[5], ".sst") || filepath.Dir(fields[5]) != abs {
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
		// The address is the kernel's, not Go memory: pass it as a number.
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT)
	}
}
