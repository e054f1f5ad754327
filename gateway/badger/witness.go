package badger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"github.com/storeprint/storeprint"
)

// The witness is a small file beside Badger's own that records the last
// commit: its number, the digest of everything stored after it and the
// counters. It is written in place once a commit is answered, in the same
// flush as a later commit's log or on its own when the store is quiet, at
// most idleSync later (see syncer), so an acknowledged write
// that later goes missing from Badger's files (a log cut short, a table
// the MANIFEST forgot) shows at the next start as a store behind its
// witness. Only the loss of the commits answered within that last stretch
// before a power cut could go unseen.
//
// The file holds two slots of 4 KiB; commits write them in turn, so a
// write torn by a power cut spoils at most the slot being written and the
// other still holds the commit before. Each slot:
//
//	magic "SPWITNS1" | id (16) | gen | sum | keys | tasks | task seq |
//	event seq | audit seq | unix nanos | crc32c of the above
//
// id ties the witness to its store (the store keeps it under m/witness):
// a witness copied in from another data dir counts as no witness.
type witness struct {
	f    *os.File
	path string
	id   [16]byte
}

type witnessState struct {
	ID  [16]byte
	Cmt commitState
	Ctr counters
	At  time.Time
}

const (
	witnessMagic = "SPWITNS1"
	witnessSlot  = 4096
	witnessLen   = 8 + 16 + 8*8 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newWitnessID() [16]byte {
	var id [16]byte
	copy(id[:], storeprint.RandomBytes(len(id)))
	return id
}

// readWitness returns the newest intact slot, or nil when there is no
// witness file.
func readWitness(dir string) (*witnessState, error) {
	b, err := os.ReadFile(filepath.Join(dir, witnessFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", witnessFile, err)
	}
	var best *witnessState
	for slot := 0; slot < 2; slot++ {
		if len(b) < slot*witnessSlot+witnessLen {
			continue
		}
		s, ok := decodeWitness(b[slot*witnessSlot : slot*witnessSlot+witnessLen])
		if ok && (best == nil || s.Cmt.Gen > best.Cmt.Gen) {
			best = s
		}
	}
	if best == nil {
		return nil, damaged(dir, "the witness file, which records the last commit, is damaged in both of its copies", witnessFile)
	}
	return best, nil
}

func decodeWitness(b []byte) (*witnessState, bool) {
	if !bytes.Equal(b[:8], []byte(witnessMagic)) {
		return nil, false
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, false
	}
	s := &witnessState{}
	copy(s.ID[:], b[8:24])
	u := func(i int) uint64 { return binary.BigEndian.Uint64(b[24+8*i:]) }
	s.Cmt = commitState{Gen: u(0), digest: digest{Sum: u(1), Keys: u(2), Tasks: u(3)}}
	s.Ctr = counters{task: u(4), event: u(5), audit: u(6)}
	s.At = time.Unix(0, int64(u(7)))
	return s, true
}

func encodeWitness(s *witnessState) []byte {
	b := make([]byte, 0, witnessLen)
	b = append(b, witnessMagic...)
	b = append(b, s.ID[:]...)
	for _, v := range []uint64{s.Cmt.Gen, s.Cmt.Sum, s.Cmt.Keys, s.Cmt.Tasks, s.Ctr.task, s.Ctr.event, s.Ctr.audit, uint64(s.At.UnixNano())} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// openWitness opens the witness file, creating it (at its full size,
// holding s) when there is none. Once created it never grows, so writing
// it needs no free space.
func openWitness(dir string, s *witnessState) (*witness, error) {
	path := filepath.Join(dir, witnessFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err := createWitness(dir, s); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", witnessFile, err)
	}
	return &witness{f: f, path: path, id: s.ID}, nil
}

// createWitness writes a new witness file holding s in both slots, in
// place of any other.
func createWitness(dir string, s *witnessState) error {
	path := filepath.Join(dir, witnessFile)
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", witnessFile, err)
	}
	b := make([]byte, 2*witnessSlot)
	e := encodeWitness(s)
	copy(b, e)
	copy(b[witnessSlot:], e)
	if _, err = f.WriteAt(b, 0); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create %s: %w", witnessFile, err)
	}
	return nil
}

// write records a commit in the slot of its parity and syncs it.
func (w *witness) write(c commitState, ctr counters, at time.Time) error {
	b := encodeWitness(&witnessState{ID: w.id, Cmt: c, Ctr: ctr, At: at})
	if _, err := w.f.WriteAt(b, int64(c.Gen%2)*witnessSlot); err != nil {
		return fmt.Errorf("write %s: %w", witnessFile, err)
	}
	if err := syncData(w.f); err != nil {
		return fmt.Errorf("sync %s: %w", witnessFile, err)
	}
	return nil
}

func (w *witness) close() error { return w.f.Close() }
