package badger

import (
	"os"

	"golang.org/x/sys/windows"
)

// freeBytes returns the space available to this process on dir's disk.
func freeBytes(dir string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, err
	}
	return avail, nil
}

// allocatedBytes returns the file's size: Windows allocates files as they
// are extended.
func allocatedBytes(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// syncDir is a no-op: NTFS keeps directory entries with the files'
// metadata, and Windows cannot open a directory for syncing.
func syncDir(string) error { return nil }

// dirStamp is the directory's modification time.
func dirStamp(dir string) (int64, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}

// syncData flushes a file to disk.
func syncData(f *os.File) error { return f.Sync() }
