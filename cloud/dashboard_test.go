package cloud_test

import (
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestDashboardFilter_Validate(t *testing.T) {
	now := time.Date(2026, 9, 23, 3, 30, 0, 0, time.FixedZone("CST", 8*3600))
	t.Run("Defaults", func(t *testing.T) {
		f := cloud.DashboardFilter{}
		if err := f.Validate(now); err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2026, 9, 22, 0, 0, 0, 0, time.UTC); !f.Since.Equal(want) || f.Limit != cloud.DefaultDashboardStores {
			t.Fatalf("got since %v limit %d, want %v %d", f.Since, f.Limit, want, cloud.DefaultDashboardStores)
		}
	})
	for name, tc := range map[string]struct {
		f    cloud.DashboardFilter
		code string
	}{
		"LocalMidnight": {cloud.DashboardFilter{Since: time.Date(2026, 9, 23, 0, 0, 0, 0, now.Location())}, ""},
		"ErrFuture":     {cloud.DashboardFilter{Since: now.Add(time.Hour)}, storeprint.EINVALID},
		"ErrTooOld":     {cloud.DashboardFilter{Since: now.Add(-49 * time.Hour)}, storeprint.EINVALID},
		"ErrLimit":      {cloud.DashboardFilter{Since: now, Limit: cloud.MaxDashboardStores + 1}, storeprint.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			if got := storeprint.ErrorCode(tc.f.Validate(now)); got != tc.code {
				t.Fatalf("got %q, want %q", got, tc.code)
			}
		})
	}
}

func TestTaskSearch_Validate(t *testing.T) {
	for name, tc := range map[string]struct {
		s    cloud.TaskSearch
		code string
	}{
		"OrderID":   {cloud.TaskSearch{Query: "1042"}, ""},
		"InStore":   {cloud.TaskSearch{Query: "order_1042_station_hot", StoreID: "s1", Limit: 5}, ""},
		"ErrEmpty":  {cloud.TaskSearch{}, storeprint.EINVALID},
		"ErrLong":   {cloud.TaskSearch{Query: strings.Repeat("x", 201)}, storeprint.EINVALID},
		"ErrStore":  {cloud.TaskSearch{Query: "x", StoreID: "a b"}, storeprint.EINVALID},
		"ErrLimit":  {cloud.TaskSearch{Query: "x", Limit: -1}, storeprint.EINVALID},
		"ErrBinary": {cloud.TaskSearch{Query: "a\x00"}, storeprint.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			if got := storeprint.ErrorCode(tc.s.Validate()); got != tc.code {
				t.Fatalf("got %q, want %q", got, tc.code)
			}
		})
	}
}
