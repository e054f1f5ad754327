package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testbin"
)

type rss struct{ total, anon, file, peak int64 }

// readRSS reads a process's resident set from /proc, with the most it has
// been (peak).
func readRSS(t testing.TB, pid int) rss {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var r rss
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			r.total = n << 10
		case "RssAnon:":
			r.anon = n << 10
		case "RssFile:":
			r.file = n << 10
		case "VmHWM:":
			r.peak = n << 10
		}
	}
	return r
}

// readCPU reads the CPU time (user and system) a process has used, from
// /proc.
func readCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	d, err := testbin.ProcessCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// readWriteBytes reads how many bytes a process has sent to storage (its
// write_bytes in /proc/<pid>/io: pages it dirtied in files on disk, each
// time it dirtied them).
func readWriteBytes(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/io has no write_bytes", pid)
	return 0
}
