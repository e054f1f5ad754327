package testlog

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer that many goroutines write while a test reads
// it, or waits for what it should hold (Next). The zero value is an empty
// buffer.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed at the next write; nil until Next asks
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Next returns what was written so far and a channel closed at the next
// write, for a test that waits until the buffer holds what it wants.
func (l *Buffer) Next() (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.b.String(), l.changed
}
