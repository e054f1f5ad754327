package badger

import (
	"fmt"
	"strings"
)

// DamageError says that the data dir is damaged in a way the store will not
// run on: what is wrong and in which files. The gateway refuses to start on
// it rather than print from data it cannot trust; the way out is restoring
// a backup or a repair that keeps what is readable (see Repair).
type DamageError struct {
	Dir     string
	Files   []string // the damaged or missing files, relative to Dir
	Problem string   // what is wrong, in words
}

func (e *DamageError) Error() string {
	s := "data dir " + e.Dir + " is damaged: " + e.Problem
	if len(e.Files) > 0 {
		s += " (" + strings.Join(e.Files, ", ") + ")"
	}
	return s
}

func damaged(dir, problem string, files ...string) *DamageError {
	return &DamageError{Dir: dir, Files: files, Problem: problem}
}

func damagedf(dir string, files []string, format string, args ...any) *DamageError {
	return damaged(dir, fmt.Sprintf(format, args...), files...)
}
