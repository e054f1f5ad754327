//go:build !linux

package main

import "testing"

type rss struct{ total, anon, file int64 }

func readRSS(t testing.TB, _ int) rss {
	t.Skip("reads /proc")
	return rss{}
}
