package client

import "testing"

// latest takes every ack waiting and keeps the highest.
func TestLatest(t *testing.T) {
	t.Parallel()
	acks := make(chan uint64, 4)
	acks <- 30
	acks <- 50
	acks <- 40
	if got := latest(20, acks); got != 50 {
		t.Fatalf("got %d, want 50", got)
	}
	if len(acks) != 0 {
		t.Fatalf("got %d acks left waiting, want none", len(acks))
	}
	if got := latest(60, acks); got != 60 {
		t.Fatalf("got %d with none waiting, want 60", got)
	}
}
