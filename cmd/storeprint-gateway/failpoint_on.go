//go:build failpoints

package main

import (
	"os"
	"syscall"
)

// failpointFromEnv stops the process with SIGKILL at the attempt step named
// by STOREPRINT_FAILPOINT (after-prepared, before-submitted,
// before-printed). Only test builds (-tags failpoints) have it.
func failpointFromEnv() func(string) {
	want := os.Getenv("STOREPRINT_FAILPOINT")
	if want == "" {
		return nil
	}
	return func(name string) {
		if name == want {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal ends the process
		}
	}
}
