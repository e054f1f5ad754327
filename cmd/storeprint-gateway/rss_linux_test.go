package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

type rss struct{ total, anon, file int64 }

// readRSS reads a process's resident set from /proc.
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
		}
	}
	return r
}

// readCPU reads the CPU time (user and system) a process has used, from
// /proc, in clock ticks of 10 ms.
func readCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: utime and stime are the 12th and 13th
	// fields after the command's closing parenthesis.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
