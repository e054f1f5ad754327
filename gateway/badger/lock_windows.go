package badger

import (
	"errors"
	"os"
	"path/filepath"
)

// probeLock fails with a *LockedError when another process holds the data
// dir: Badger keeps its LOCK file open with no sharing while it runs.
func probeLock(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDONLY, 0)
	if err == nil {
		return f.Close()
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return &LockedError{Dir: dir}
}
