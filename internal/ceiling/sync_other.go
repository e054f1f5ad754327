//go:build !linux

package main

import "os"

// syncData flushes the file to disk (fsync: fdatasync is Linux's).
func syncData(f *os.File) error { return f.Sync() }
