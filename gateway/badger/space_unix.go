//go:build !windows

package badger

import (
	"os"

	"golang.org/x/sys/unix"
)

// freeBytes returns the space available to this process on dir's disk.
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// allocatedBytes returns the disk blocks a file holds (less than its size
// when it is sparse, as Badger's memory-mapped logs are until written).
func allocatedBytes(path string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Blocks * 512, nil
}

// syncDir makes the directory's entries (new and removed files) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// dirStamp changes whenever a file is created in or removed from dir.
func dirStamp(dir string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, err
	}
	return st.Mtim.Nano() ^ st.Ctim.Nano()<<1 ^ st.Size<<3, nil
}
