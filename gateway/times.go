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
type times struct {
	clock     clock.Clock
	maxWait   time.Duration // the longest wait a stored next_at may ask for
	startWall time.Time
	startMono time.Duration

	mu    stdsync.Mutex
	tasks map[string]taskTimes // tasks accepted, rescheduled or made due by this process
}

// taskTimes are a task's monotonic readings: at acceptance when this
// process accepted it (ours), and of its next attempt when this process
// set it (dueSet).
type taskTimes struct {
	born, due    time.Duration
	ours, dueSet bool
}

func newTimes(c clock.Clock, maxWait time.Duration) *times {
	return &times{
		clock: c, maxWait: maxWait, startWall: c.Now(), startMono: c.Mono(),
		tasks: map[string]taskTimes{},
	}
}

// accepted enters a task accepted now and due d from now.
func (s *times) accepted(taskNo string, d time.Duration) {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[taskNo] = taskTimes{born: now, due: now + max(d, 0), ours: true, dueSet: true}
}

// fresh reports whether the task was accepted by this process.
func (s *times) fresh(taskNo string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks[taskNo].ours
}

// dueIn makes a task due d from now (d may be 0).
func (s *times) dueIn(taskNo string, d time.Duration) {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	tt := s.tasks[taskNo]
	tt.due, tt.dueSet = now+max(d, 0), true
	s.tasks[taskNo] = tt
}

// forget drops what is kept of a task that no longer waits.
func (s *times) forget(taskNo string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, taskNo)
}

// age returns how long the task has waited since it was accepted.
func (s *times) age(t *Task) time.Duration {
	now := s.clock.Mono()
	s.mu.Lock()
	defer s.mu.Unlock()
	tt := s.tasks[t.TaskNo]
	born := tt.born
	if !tt.ours {
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
	tt := s.tasks[t.TaskNo]
	due := tt.due
	if !tt.dueSet {
		due = s.startMono + min(max(t.NextAt.Sub(s.startWall), 0), s.maxWait)
	}
	return max(due-now, 0)
}
