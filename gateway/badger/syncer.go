package badger

import (
	"cmp"
	"time"

	bdg "github.com/dgraph-io/badger/v4"
	"github.com/storeprint/storeprint"
)

// syncLog makes Badger's log durable when the store syncs it itself (see
// walSync); Badger syncs it otherwise.
func (d *DB) syncLog() error {
	if d.wal == nil {
		return nil
	}
	return d.wal.sync()
}

// observedSyncLog is syncLog for the commits of jobs, timed for the
// observer when the store syncs the log itself.
func (d *DB) observedSyncLog(jobs []syncJob) error {
	if d.wal == nil || d.opts.Observer == nil {
		return d.syncLog()
	}
	t0 := time.Now()
	err := d.syncLog()
	if err == nil {
		n := 0
		for _, j := range jobs {
			n += len(j.reqs)
		}
		d.opts.Observer.Synced(time.Since(t0), n)
	}
	return err
}

// syncAhead is how many commits the writer may have waiting for the
// syncer beyond the one being synced; one sync covers them all.
const syncAhead = 8

// syncJob is a commit, in Badger's memtable and log, to sync and answer,
// and updates that failed since the last commit. Those ran against
// commits not synced yet, so their answers wait for those syncs too.
type syncJob struct {
	commit  bool // false: no commit, only refusals
	cmt     commitState
	ctr     counters
	at      time.Time
	reqs    []*request
	refused []refusal
	view    *bdg.Txn // the store as of this commit, for readers once it is synced
}

// refusal is an update that failed, with its error.
type refusal struct {
	r   *request
	err error
}

// idleSync is the longest a commit waits for a sync when no update asks
// for one: a commit of updates that need no sync of their own
// (gateway.WithoutSync), and the witness of the newest synced commit.
const idleSync = time.Second

// syncer syncs the commits, with the new files' directory entries, lets
// readers see them (the newest's view) and answers their updates. The
// writer goes on committing meanwhile: one sync covers every commit
// waiting when it starts (group commit), and commits are synced and
// answered in the order they were made. A sync that one update alone
// waits for holds off up to gatherWait for a second one.
//
// A commit whose updates need no sync of their own (their answers went
// out when they were committed) waits for the next commit that does, and
// rides on its sync; when none comes within idleSync it is synced on its
// own.
//
// The witness rides on the syncs too (see flush): a sync writes it, in
// the same flush as Badger's log, with the newest commit synced before,
// once that commit has waited witnessAfter for it; a quiet store writes
// it after its last sync, at most idleSync after that commit was
// answered. So a busy store writes its witness a little more than once a
// second (each write is a page of the disk's life), never once a commit,
// and a store printing a ticket now and then no more often than it syncs
// its log. The witness is never ahead of the store: a power cut
// leaves the store ahead of its witness by at most the commits of the
// last second, which is sound; only their loss could go unseen. Close
// records the last commit before it returns.
func (d *DB) syncer(synced syncJob) {
	defer d.wg.Done()
	s := &syncState{d: d, durable: synced, witnessed: synced.cmt.Gen}
	timer := time.NewTimer(idleSync)
	timer.Stop()
	defer timer.Stop()
	var pending []syncJob
	for {
		select {
		case <-timer.C:
			pending = s.flush(pending, true)
			s.arm(timer, pending)
			continue
		case job, ok := <-d.syncQ:
			if !ok {
				s.flush(pending, true)
				return
			}
			pending = append(pending, job)
		}
		closed := false
	more:
		for {
			select {
			case j, ok := <-d.syncQ:
				if !ok {
					closed = true
					break more
				}
				pending = append(pending, j)
			default:
				break more
			}
		}
		if closed {
			s.flush(pending, true)
			return
		}
		if waiters(pending) > 0 {
			if waiters(pending) == 1 {
				g := time.NewTimer(gatherWait)
			gather:
				for {
					select {
					case j, ok := <-d.syncQ:
						if !ok {
							closed = true
							break gather
						}
						pending = append(pending, j)
						if waiters(pending) > 1 {
							break gather
						}
					case <-g.C:
						break gather
					}
				}
				g.Stop()
				if closed {
					s.flush(pending, true)
					return
				}
			}
			pending = s.flush(pending, false)
		}
		s.arm(timer, pending)
	}
}

// witnessAfter is how long a synced commit waits for a sync to carry
// its witness: short of idleSync, when a store quiet since writes it on
// its own, so that a busy store's syncs carry it.
const witnessAfter = idleSync * 3 / 4

// gatherWait is how long a sync that one update alone waits for holds
// off for a second one: a store's stations print side by side, and the
// prepared receipts and confirmations of an order's tickets come within
// a millisecond of each other as often as not. Where more wait, the sync
// starts at once.
const gatherWait = time.Millisecond

// waiters counts the updates that wait for the sync of jobs.
func waiters(jobs []syncJob) int {
	n := 0
	for _, j := range jobs {
		n += len(j.reqs) + len(j.refused)
	}
	return n
}

// syncState is the syncer's own.
type syncState struct {
	d    *DB
	last error // of the last sync
	// durable is the newest commit synced, and witnessed the newest in
	// the witness.
	durable   syncJob
	witnessed uint64
	// lazySince is when the oldest commit waiting for a sync came, and
	// unwitSince when the oldest synced commit not in the witness was
	// synced; zero when there is none.
	lazySince, unwitSince time.Time
}

// arm sets the timer for the next sync that no update asks for: idleSync
// after the oldest commit waiting for a sync or for the witness.
func (s *syncState) arm(timer *time.Timer, pending []syncJob) {
	if len(pending) > 0 && s.lazySince.IsZero() {
		s.lazySince = time.Now()
	}
	since := s.lazySince
	if !s.unwitSince.IsZero() && (since.IsZero() || s.unwitSince.Before(since)) {
		since = s.unwitSince
	}
	if since.IsZero() {
		timer.Stop()
		return
	}
	timer.Reset(time.Until(since.Add(idleSync)))
}

// flush syncs the commits of jobs and answers their updates. A flush that
// someone waits for (idle false) writes the witness of the commit synced
// before, while the log syncs, once that commit has waited witnessAfter; an
// idle one, after the log, writes the witness of the newest commit.
func (s *syncState) flush(jobs []syncJob, idle bool) []syncJob {
	d := s.d
	defer clear(jobs)
	s.lazySince = time.Time{}
	newest := -1
	for i, j := range jobs {
		if j.commit {
			newest = i
		}
	}
	if newest < 0 {
		// Refusals only: what they read was synced already.
		for _, j := range jobs {
			for _, f := range j.refused {
				f.r.done <- cmp.Or(s.last, f.err)
			}
		}
		if idle {
			s.witness()
		}
		return jobs[:0]
	}
	var wit *syncJob
	if !idle && s.durable.cmt.Gen > s.witnessed && time.Since(s.unwitSince) >= witnessAfter {
		w := s.durable
		wit = &w
	}
	var err error
	if d.syncHook != nil {
		err = d.syncHook()
	}
	if err == nil {
		var witErr chan error
		if wit != nil {
			// Both files in one flush: the witness holds a commit already
			// on disk, so it is never ahead, whichever lands first.
			witErr = make(chan error, 1)
			go func() { witErr <- d.wit.write(wit.cmt, wit.ctr, wit.at) }()
		}
		err = d.observedSyncLog(jobs)
		if witErr != nil {
			s.witnessed1(*wit, <-witErr)
		}
	}
	if err == nil {
		d.syncDirIfChanged()
	}
	for i, j := range jobs {
		if i == newest {
			d.publish(j.view)
		} else if j.commit {
			j.view.Discard() // never read: a newer one is here
		}
	}
	if idle && err == nil {
		if fn := d.onQuiet.Load(); fn != nil && *fn != nil {
			(*fn)()
		}
	}
	top := jobs[newest]
	if err != nil {
		err = storeprint.Errorf(storeprint.EUNAVAILABLE, "storage write failed: %v", err)
		d.fail(top.cmt.Gen, err)
	}
	s.last = err
	for _, j := range jobs {
		for _, f := range j.refused {
			// What it read may not be on disk: say so rather than answer from it.
			f.r.done <- cmp.Or(err, f.err)
		}
		for _, r := range j.reqs {
			r.done <- err
		}
	}
	if err == nil {
		s.durable = syncJob{commit: true, cmt: top.cmt, ctr: top.ctr, at: top.at}
		if s.unwitSince.IsZero() {
			s.unwitSince = time.Now()
		}
		if idle {
			s.witness()
		}
	}
	return jobs[:0]
}

// witness records the newest synced commit in the witness, if it is not
// there yet.
func (s *syncState) witness() {
	if s.durable.cmt.Gen <= s.witnessed {
		return
	}
	var t0 time.Time
	if s.d.opts.Observer != nil {
		t0 = time.Now()
	}
	err := s.d.wit.write(s.durable.cmt, s.durable.ctr, s.durable.at)
	if err == nil && s.d.opts.Observer != nil {
		s.d.opts.Observer.Synced(time.Since(t0), 0) // a flush of its own, counted with the syncs
	}
	s.witnessed1(s.durable, err)
}

// witnessed1 takes the outcome of writing job's commit to the witness.
func (s *syncState) witnessed1(job syncJob, err error) {
	if err != nil {
		// Committed, but not witnessed: take no more until it works.
		s.d.fail(job.cmt.Gen, storeprint.Errorf(storeprint.EUNAVAILABLE, "storage write failed: %v", err))
		return
	}
	s.witnessed = job.cmt.Gen
	s.d.witnessed(job.cmt.Gen)
	s.unwitSince = time.Time{}
}
