//go:build !linux

package main

import "time"

// selfCPU is this process's CPU time so far: measured on Linux only.
func selfCPU() time.Duration { return 0 }
