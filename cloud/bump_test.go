package cloud_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud"
)

func TestNewBumpTimes(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 9, 23, 0, 0, 0, 0, time.UTC)
	var ss []cloud.BumpSample
	for i := 1; i <= 10; i++ { // hot: 1..10 min, the first five at 11:00, the rest at 12:00
		h := 11
		if i > 5 {
			h = 12
		}
		ss = append(ss, cloud.BumpSample{Station: "hot", Ordered: since.Add(time.Duration(h) * time.Hour), Took: time.Duration(i) * time.Minute})
	}
	ss = append(ss, cloud.BumpSample{Station: "cold", Ordered: since, Took: 30 * time.Second})
	got := cloud.NewBumpTimes("a1", since, ss)
	if len(got.Stations) != 2 || got.Stations[0].Station != "cold" || got.Stations[1].Station != "hot" {
		t.Fatalf("got stations %+v, want cold and hot", got.Stations)
	}
	hot := got.Stations[1]
	if hot.Count != 10 || hot.MedianS != 300 || hot.P90S != 540 {
		t.Errorf("hot: got %+v, want 10 tickets, median 300 s, p90 540 s", hot.BumpStats)
	}
	if len(hot.Hours) != 2 || !hot.Hours[0].Hour.Equal(since.Add(11*time.Hour)) || hot.Hours[0].MedianS != 180 || hot.Hours[1].P90S != 600 {
		t.Errorf("hot by hour: got %+v %+v, want 11:00 median 180 s and 12:00 p90 600 s", hot.Hours[0], hot.Hours[1])
	}
	if c := got.Stations[0]; c.Count != 1 || c.MedianS != 30 || c.P90S != 30 {
		t.Errorf("cold: got %+v, want one ticket of 30 s", c.BumpStats)
	}
}
