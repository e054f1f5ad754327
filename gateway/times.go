package gateway

import (
	stdsync "sync"
	"time"

	"github.com/storeprint/storeprint/internal/clock"
)

// times keeps, in memory and on the monotonic clock, when each waiting task
// was accepted and when it is due for its next attempt.
//
// A task stores its times as wall-clock times (created_at, next_at), for
// people and for the cloud. The wall clock steps, though (NTP, a person
// setting the time), and a stored time compared with a stepped clock would
// stall a printer for as long as the clock went back, or flag every waiting
// ticket stale when it jumped forward. So waiting is measured here instead:
//
//   - A task accepted, rescheduled or made due by this process is entered
//     with the monotonic reading of that moment.
//   - A task from before the process started, or one this process no
//     longer keeps (it left the queue: flagged, done), is re-based on the
//     start: its age is what the wall clock said at start (start wall -
//     created_at, negative for a task accepted since) plus the monotonic
//     time since, and its due time is
//     next_at - start wall from the start, never more than the longest
//     backoff. A wall step while the process runs changes neither, and
//     nothing needs keeping for it until this process reschedules it.
//
// Leases are not kept here: a lease lives in the attempt that holds it
// (see lease), and every lease from before a restart has expired.
//
// A burst leaves every task it brought waiting here, so what is kept is
// small: tasks are known by their sequence number (unique in the store,
// never changed), the acceptance of each task this process accepted in
// born, and a due time only where it differs from "due at acceptance"
// (due): a task accepted with a later next_at, or made due again by this
// process. A task of ours with no entry in due is due since it was
// accepted, a wait of 0 like any due time already passed.
type times struct {
	clock     clock.Clock
	maxWait   time.Duration // the longest wait a stored next_at may ask for
	startWall time.Time
	startMono time.Duration

	mu   stdsync.Mutex
	born map[uint64]time.Duration // tasks accepted by this process: at acceptance
	due  map[uint64]time.Duration // tasks made due by this process, unless due at acceptance
}

func newTimes(c clock.Clock, maxWait time.Duration) *times {
	return &times{
		clock: c, maxWait: maxWait, startWall: c.Now(), startMono: c.Mono(),
		born: map[uint64]time.Duration{}, due: map[uint64]time.Duration{},
	}
}

// accepted enters a task accepted now and due d from now.
func (s *times) accepted(seq uint64, d time.Duration) {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.born[seq] = now
	if d > 0 {
		s.due[seq] = now + d
	} else {
		delete(s.due, seq)
	}
}

// fresh reports whether the task was accepted by this process.
func (s *times) fresh(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.born[seq]
	return ok
}

// dueIn makes a task due d from now (d may be 0).
func (s *times) dueIn(seq uint64, d time.Duration) {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ours := s.born[seq]; ours && d <= 0 {
		// Due now: as due as at its acceptance, which is past.
		delete(s.due, seq)
		return
	}
	s.due[seq] = now + max(d, 0)
}

// forget drops what is kept of a task that no longer waits.
func (s *times) forget(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.born, seq)
	delete(s.due, seq)
}

// age returns how long the task has waited since it was accepted.
func (s *times) age(t *Task) time.Duration {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	born, ours := s.born[t.Seq]
	if !ours {
		// Accepted before the start, or by this process and no longer
		// kept (flagged, done): its acceptance on the monotonic clock,
		// from what the wall clock said at the start. The same every
		// time: nothing to keep.
		born = s.startMono - s.startWall.Sub(t.CreatedAt)
	}
	return max(now-born, 0)
}

// wait returns how long until the task is due; 0 when it is due now.
func (s *times) wait(t *Task) time.Duration {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	due, set := s.due[t.Seq]
	if !set {
		if born, ours := s.born[t.Seq]; ours {
			due, set = born, true
		}
	}
	if !set {
		due = s.startMono + min(max(t.NextAt.Sub(s.startWall), 0), s.maxWait)
	}
	return max(due-now, 0)
}
