package testbin

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcessCPU is the CPU time (user and system) process pid has used so
// far, from /proc (Linux only).
func ProcessCPU(pid int) (time.Duration, error) {
	return StatCPU(fmt.Sprintf("/proc/%d/stat", pid))
}

// StatCPU reads the CPU time (user and system) from a /proc/<pid>/stat
// file, in the kernel's clock ticks of 10 ms.
func StatCPU(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...: utime and stime are the 12th and 13th
	// fields after the command's closing parenthesis.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: %q", path, s)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
