package badger

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncData flushes a file's data (not its times) to disk.
func syncData(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
