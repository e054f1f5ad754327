//go:build !windows

package badger

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// probeLock fails with a *LockedError when another process holds the data
// dir (Badger locks the directory itself), so a running gateway's files are
// never inspected while they change.
func probeLock(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return nil // Badger will say
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return &LockedError{Dir: dir}
		}
		return nil
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
