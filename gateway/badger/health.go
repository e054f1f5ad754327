package badger

import (
	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Health implements gateway.Store.
func (d *DB) Health() error {
	if p := d.health.Load(); p != nil {
		return *p
	}
	return nil
}

// OnHealthChange sets a function called after Health changes (trouble
// found, its reason changed, trouble over): the LAN page's live updates
// follow the disk with it.
func (d *DB) OnHealthChange(fn func()) { d.onHealth.Store(&fn) }

// OnQuietSync sets a function called after a sync that no update waited
// for (see syncer) let readers see commits of updates that needed no
// sync of their own: their callers were answered before readers could
// see them, so whatever follows the store learns of them here.
func (d *DB) OnQuietSync(fn func()) { d.onQuiet.Store(&fn) }

// fail records a storage error seen after commit gen.
func (d *DB) fail(gen uint64, err error) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	d.failedAt = gen
	d.setHealth(err)
}

// witnessed clears a storage error seen before commit gen, now witnessed.
func (d *DB) witnessed(gen uint64) {
	d.healthMu.Lock()
	defer d.healthMu.Unlock()
	if gen > d.failedAt && d.Health() != nil {
		d.setHealth(nil)
	}
}

func (d *DB) setHealth(err error) {
	if err == nil {
		if d.health.Swap(nil) != nil {
			d.log.Info("storage writes succeed again")
			d.healthChanged()
		}
		return
	}
	if old := d.health.Swap(&err); old == nil || (*old).Error() != err.Error() {
		d.log.Error("storage trouble", "err", err)
		d.healthChanged()
	}
}

func (d *DB) healthChanged() {
	if fn := d.onHealth.Load(); fn != nil && *fn != nil {
		(*fn)()
	}
}

// Disk returns the data disk's free space as last read (every
// DiskCheckEvery), or nil when it cannot be read.
func (d *DB) Disk() *gateway.DiskState { return d.disk.Load() }

// readDisk reads the free space and reports a disk low on it.
func (d *DB) readDisk() *gateway.DiskState {
	free, err := freeBytes(d.dir)
	if err != nil {
		d.disk.Store(nil)
		return nil
	}
	s := &gateway.DiskState{FreeBytes: free, ReserveBytes: d.opts.MinFreeBytes, Low: free < d.opts.MinFreeBytes, CheckedAt: d.opts.Now()}
	d.disk.Store(s)
	return s
}

func (d *DB) diskLow(s *gateway.DiskState) error {
	return storeprint.Errorf(storeprint.EUNAVAILABLE, "disk low: %d MiB free on the data disk (%s), below the %d MiB the gateway keeps in reserve; new orders are refused until space is freed",
		s.FreeBytes>>20, d.dir, s.ReserveBytes>>20)
}
