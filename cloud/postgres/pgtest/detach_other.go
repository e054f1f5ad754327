//go:build !unix

package pgtest

import "os/exec"

// detach does nothing where there are no process groups to leave.
func detach(cmd *exec.Cmd) {}
