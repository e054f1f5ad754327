package badger

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint/gateway"
)

// Recovery returns the store's last recovery, or nil if it never had one.
func (d *DB) Recovery() *gateway.Recovery {
	r := d.recovery.Load()
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// MarkHeld records that the waiting tasks of the pending recovery have been
// held for a person.
func (d *DB) MarkHeld(n int) error {
	r := d.Recovery()
	if r == nil || r.Held {
		return nil
	}
	r.Held, r.HeldTasks = true, n
	return d.setRecovery(r)
}

// scan adds up everything stored, as the writer's digest does.
func scan(db *bdg.DB) (digest, error) {
	var dg digest
	err := db.View(func(txn *bdg.Txn) error {
		opts := bdg.DefaultIteratorOptions
		opts.PrefetchValues = false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			if volatile(k) {
				continue
			}
			if err := item.Value(func(v []byte) error { dg.add(k, v); return nil }); err != nil {
				return fmt.Errorf("read %q: %w", k, err)
			}
		}
		return nil
	})
	return dg, err
}

type storedState struct {
	cmt      *commitState
	id       *[16]byte
	recovery *gateway.Recovery
}

func (d *DB) readState() (storedState, error) {
	var s storedState
	err := d.db.View(func(txn *bdg.Txn) error {
		get := func(k []byte) ([]byte, error) {
			item, err := txn.Get(k)
			if errors.Is(err, bdg.ErrKeyNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return item.ValueCopy(nil)
		}
		b, err := get(metaCommit)
		if err != nil {
			return err
		}
		if b != nil {
			c, err := decodeCommitState(b)
			if err != nil {
				return err
			}
			s.cmt = &c
		}
		if b, err = get(metaWitness); err != nil {
			return err
		}
		if len(b) == 16 {
			var id [16]byte
			copy(id[:], b)
			s.id = &id
		}
		if b, err = get(metaRecovery); err != nil {
			return err
		}
		if b != nil {
			var r gateway.Recovery
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("read recovery: %w", err)
			}
			s.recovery = &r
		}
		return nil
	})
	return s, err
}

// verify compares what is stored with the store's own record of its last
// commit and with the witness, and decides how the store opens:
//
//   - what is stored does not add up to the store's own record of its last
//     commit: data in the middle went missing (a table or an older log
//     lost). A *DamageError: Repair keeps what is readable.
//   - the store is behind its witness (its last writes are gone: a log cut
//     short or deleted), or the witness is missing or another store's: the
//     store opens in the recovered state. Its counters move past the
//     witness's, so no sequence number is used twice, and the gateway holds
//     every waiting task for a person.
//   - behind its witness while tables the MANIFEST does not list were set
//     aside: the MANIFEST lost track of them, and they hold the lost writes.
//     A *DamageError: Repair puts them back.
//   - behind its witness with a memtable log missing (none left, or one
//     missing from their sequence, mems being the logs found before
//     Badger opened): the log that held the lost commits was deleted, not
//     cut short by a crash. A *DamageError naming it: started, the store
//     would answer healthy with the tickets gone.
//   - otherwise the store is whole. A witness one commit behind is a crash
//     between the commit and the witness's sync.
func (d *DB) verify(w *witnessState, aside, mems []string) error {
	st, err := d.readState()
	if err != nil {
		return fmt.Errorf("read the store's record: %w", err)
	}
	d.recovery.Store(st.recovery)
	found, err := scan(d.db)
	if err != nil {
		return damagedf(d.dir, nil, "a stored value cannot be read: %v", err)
	}
	if w != nil && st.id != nil && w.ID != *st.id {
		d.log.Warn("the witness file belongs to another data dir; not using it", "data_dir", d.dir)
		w = nil
	}
	files := append([]string{manifestFile}, aside...)
	switch {
	case st.cmt == nil && w == nil:
		// A new store, or one written by an older release: start witnessing.
		return d.startWitness(commitState{digest: found}, nil, nil)
	case st.cmt == nil:
		if len(aside) > 0 {
			return damagedf(d.dir, files, "the MANIFEST no longer lists the store's tables (the store reads as empty; its witness counts %d tasks)", w.Cmt.Tasks)
		}
		if gone := missingMemLogs(mems); gone != nil {
			return damagedf(d.dir, gone, "the store reads as empty, but its witness counts %d commits and %d tasks: the memtable log that held them is missing (deleted)",
				w.Cmt.Gen, w.Cmt.Tasks)
		}
		return d.recover(commitState{digest: found}, w, fmt.Sprintf("the store read as empty, but its witness counts %d tasks", w.Cmt.Tasks))
	case found != st.cmt.digest:
		return damagedf(d.dir, aside, "what is stored does not add up to the store's record of its last commit (recorded %s; found %s): part of the data went missing, an older log or a table", st.cmt.digest, found)
	case w == nil && st.id == nil:
		return d.startWitness(*st.cmt, nil, nil)
	case w == nil:
		return d.recover(*st.cmt, nil, "the witness file, which records the last commit, is missing or belongs to another data dir: the store cannot prove that it holds every write")
	case w.Cmt.Gen > st.cmt.Gen:
		if len(aside) > 0 {
			return damagedf(d.dir, files, "the MANIFEST lost track of tables that hold the last %d commits", w.Cmt.Gen-st.cmt.Gen)
		}
		if gone := missingMemLogs(mems); gone != nil {
			return damagedf(d.dir, gone, "the store is %d commits behind its witness (%d tasks gone): the memtable log that held them is missing (deleted)",
				w.Cmt.Gen-st.cmt.Gen, int64(w.Cmt.Tasks)-int64(st.cmt.Tasks))
		}
		return d.recover(*st.cmt, w, fmt.Sprintf("the store is %d commits behind its witness: its last writes, up to the commit at %s, were lost from its logs",
			w.Cmt.Gen-st.cmt.Gen, w.At.UTC().Format(time.RFC3339)))
	case w.Cmt.Gen == st.cmt.Gen && w.Cmt.digest != st.cmt.digest:
		return d.recover(*st.cmt, w, "the store does not match the witness of its last commit")
	}
	if gap := st.cmt.Gen - w.Cmt.Gen; gap > 1 {
		d.log.Warn("the witness is behind the store", "commits", gap)
	}
	return d.startWitness(*st.cmt, st.id, nil)
}

// startWitness records the commit state in the store and opens the
// witness (creating it if there is none).
func (d *DB) startWitness(c commitState, id *[16]byte, rec *gateway.Recovery) error {
	var wid [16]byte
	if id != nil {
		wid = *id
	} else {
		wid = newWitnessID()
	}
	err := d.update(func(txn *bdg.Txn) error {
		if err := txn.Set(metaCommit, c.encode()); err != nil {
			return err
		}
		if err := txn.Set(metaWitness, wid[:]); err != nil {
			return err
		}
		if _, err := txn.Get(metaSeqsFrom); errors.Is(err, bdg.ErrKeyNotFound) {
			// Tasks and audit entries stored before this record their
			// outbox seq in no value: count them all as of this seq.
			if err := txn.Set(metaSeqsFrom, u64(d.ctr.event)); err != nil {
				return err
			}
		}
		if rec != nil {
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := txn.Set(metaRecovery, b); err != nil {
				return err
			}
		}
		return setCounters(txn, d.ctr)
	})
	if err != nil {
		return fmt.Errorf("record the commit state: %w", err)
	}
	d.cmt = c
	if rec != nil {
		d.recovery.Store(rec)
	}
	s := &witnessState{ID: wid, Cmt: c, Ctr: d.ctr, At: d.opts.Now()}
	if id == nil || rec != nil {
		err = createWitness(d.dir, s)
	}
	if err == nil {
		d.wit, err = openWitness(d.dir, s)
	}
	if err == nil {
		err = d.wit.write(c, d.ctr, s.At)
	}
	return err
}

// recover opens the store in the recovered state; see verify.
func (d *DB) recover(c commitState, w *witnessState, cause string) error {
	rec := &gateway.Recovery{At: d.opts.Now(), Cause: cause}
	if w != nil {
		if w.Cmt.Tasks > c.Tasks {
			rec.MissingTasks = int(w.Cmt.Tasks - c.Tasks)
		}
		if w.Ctr.event > d.ctr.event {
			rec.LostEventsFrom, rec.LostEventsTo = d.ctr.event+1, w.Ctr.event
		}
		d.ctr.task = max(d.ctr.task, w.Ctr.task)
		d.ctr.event = max(d.ctr.event, w.Ctr.event)
		d.ctr.audit = max(d.ctr.audit, w.Ctr.audit)
		c.Gen = max(c.Gen, w.Cmt.Gen)
	}
	msg := "data dir recovered: every waiting task will be held for a person"
	if rec.MissingTasks > 0 {
		msg = fmt.Sprintf("data dir recovered: %d tasks are missing; every waiting task will be held for a person", rec.MissingTasks)
	}
	d.log.Error(msg, "data_dir", d.dir, "cause", cause)
	st, _ := d.readState()
	return d.startWitness(c, st.id, rec)
}

// missingMemLogs returns the memtable logs missing from mems, the logs
// found in a data dir whose store is behind its witness, or nil when none
// is. Badger numbers its logs in sequence and removes the oldest once
// written out as a table, so those left are consecutive, and one always
// holds what a stop without a clean close left unwritten: a gap names the
// logs missing from it; no log at all is the one that held the lost
// commits, numbered after the last left, which no file tells (*.mem).
func missingMemLogs(mems []string) []string {
	if len(mems) == 0 {
		return []string{"*.mem"}
	}
	var fids []int
	for _, m := range mems {
		n, err := strconv.Atoi(strings.TrimSuffix(m, ".mem"))
		if err != nil {
			continue
		}
		fids = append(fids, n)
	}
	slices.Sort(fids)
	var gone []string
	for i := 1; i < len(fids); i++ {
		for f := fids[i-1] + 1; f < fids[i] && len(gone) < 10; f++ {
			gone = append(gone, fmt.Sprintf("%05d.mem", f))
		}
	}
	return gone
}
