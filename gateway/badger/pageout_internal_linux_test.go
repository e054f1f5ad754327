package badger

import (
	"reflect"
	"strings"
	"testing"
)

// A burst's tables and logs are paged out, the newest log as well (what
// a sync wrote of it is never touched again); other files are not.
func TestPageOutRegions(t *testing.T) {
	t.Parallel()
	maps := strings.Join([]string{
		"00400000-00b30000 r-xp 00000000 fe:00 1 /usr/bin/storeprint-gateway",
		"7f0000000000-7f0000100000 r--s 00000000 fe:00 2 /data/000012.sst",
		"7f0000100000-7f0001100000 rw-s 00000000 fe:00 3 /data/99999.mem",
		"7f0001100000-7f0002100000 rw-s 00000000 fe:00 4 /data/100000.mem",
		"7f0002100000-7f0002200000 r--s 00000000 fe:00 5 /other/000013.sst",
		"7f0002200000-7f0002300000 rw-s 00000000 fe:00 6 /data/000001.vlog",
		"7f0002300000-7f0002400000 rw-p 00000000 00:00 0 ",
		"7f0002400000-7f0002500000 r--s 00000000 fe:00 7 /data/000014.sst",
	}, "\n")
	got := pageOutRegions(strings.NewReader(maps), "/data")
	want := []mapped{{0x7f0000000000, 0x7f0000100000}, {0x7f0000100000, 0x7f0001100000}, {0x7f0001100000, 0x7f0002100000}, {0x7f0002400000, 0x7f0002500000}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paged out %x, want %x (the tables and the logs in /data)", got, want)
	}
}
