package main

import (
	"os"
	"syscall"
)

// syncData flushes the file's data to disk (fdatasync), as the gateway's
// store does for its log.
func syncData(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
