//go:build !linux

package main

import (
	"testing"
	"time"
)

type rss struct{ total, anon, file, peak int64 }

func readRSS(t testing.TB, _ int) rss {
	t.Skip("reads /proc")
	return rss{}
}

func readCPU(t testing.TB, _ int) time.Duration {
	t.Skip("reads /proc")
	return 0
}

func readWriteBytes(t testing.TB, _ int) int64 {
	t.Skip("reads /proc")
	return 0
}
