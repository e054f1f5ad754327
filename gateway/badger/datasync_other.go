//go:build !linux && !windows

package badger

import "os"

// syncData flushes a file to disk.
func syncData(f *os.File) error { return f.Sync() }
