//go:build !windows

package gateway_test

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// diskUsage is the disk space a directory's files take (sparse files count
// only what they hold).
func diskUsage(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
