package cloud

import (
	"slices"
	"time"
)

// Time to bump: on a kitchen display a ticket is done when a cook bumps
// it, so the time from the order to the bump is the time the kitchen took
// to make it, the figure kitchens manage by. HQ reads it per station: the
// median and the 90th percentile for the day, and for each hour of it.

// BumpTimes is a store's time to bump per station since the start of the
// viewer's day.
type BumpTimes struct {
	StoreID  string              `json:"store_id"`
	Since    time.Time           `json:"since"`
	Stations []*StationBumpTimes `json:"stations"` // by name
}

// StationBumpTimes is one station's time to bump.
type StationBumpTimes struct {
	Station string `json:"station"`
	BumpStats
	Hours []*HourBumpTimes `json:"hours"` // the hours with bumps, in order
}

// HourBumpTimes is one hour's time to bump, the hour of the orders.
type HourBumpTimes struct {
	Hour time.Time `json:"hour"` // its start
	BumpStats
}

// BumpStats are the figures of a set of tickets.
type BumpStats struct {
	Count   int     `json:"count"`
	MedianS float64 `json:"median_s"`
	P90S    float64 `json:"p90_s"`
}

// BumpSample is one ticket bumped: its station, when it was ordered and
// how long the bump took.
type BumpSample struct {
	Station string
	Ordered time.Time
	Took    time.Duration
}

// NewBumpTimes sums up samples per station and per hour since since.
func NewBumpTimes(storeID string, since time.Time, samples []BumpSample) *BumpTimes {
	out := &BumpTimes{StoreID: storeID, Since: since, Stations: []*StationBumpTimes{}}
	byStation := map[string][]BumpSample{}
	for _, s := range samples {
		byStation[s.Station] = append(byStation[s.Station], s)
	}
	for station, ss := range byStation {
		st := &StationBumpTimes{Station: station, BumpStats: bumpStats(ss), Hours: []*HourBumpTimes{}}
		byHour := map[int][]BumpSample{}
		for _, s := range ss {
			h := max(0, int(s.Ordered.Sub(since)/time.Hour))
			byHour[h] = append(byHour[h], s)
		}
		hours := make([]int, 0, len(byHour))
		for h := range byHour {
			hours = append(hours, h)
		}
		slices.Sort(hours)
		for _, h := range hours {
			st.Hours = append(st.Hours, &HourBumpTimes{Hour: since.Add(time.Duration(h) * time.Hour), BumpStats: bumpStats(byHour[h])})
		}
		out.Stations = append(out.Stations, st)
	}
	slices.SortFunc(out.Stations, func(a, b *StationBumpTimes) int {
		switch {
		case a.Station < b.Station:
			return -1
		case a.Station > b.Station:
			return 1
		}
		return 0
	})
	return out
}

// bumpStats takes the median and the 90th percentile by nearest rank.
func bumpStats(ss []BumpSample) BumpStats {
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = s.Took
	}
	slices.Sort(d)
	rank := func(p float64) float64 {
		i := int(float64(len(d))*p+0.999999) - 1
		return d[min(max(i, 0), len(d)-1)].Seconds()
	}
	return BumpStats{Count: len(d), MedianS: rank(0.5), P90S: rank(0.9)}
}
