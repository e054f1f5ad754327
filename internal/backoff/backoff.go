// Package backoff is the one schedule of waits after failures that the
// dispatcher, the sync link and the cloud's LISTEN loop share: a list of
// steps, or a wait doubling from Min to Max, each spread by the same
// jitter rule (±Jitter of the wait) so that many clients that failed
// together do not come back together.
package backoff

import (
	"math/rand/v2"
	"time"
)

// DefaultJitter spreads each wait by ±20%.
const DefaultJitter = 0.2

// Backoff is a schedule of waits. With Steps, the n-th failure waits
// Steps[n-1] (the last step repeats); otherwise Min doubles with every
// failure up to Max.
type Backoff struct {
	Steps    []time.Duration
	Min, Max time.Duration
	// Jitter spreads each wait by up to ±Jitter of it; 0 means
	// DefaultJitter, a negative value none.
	Jitter float64
	// Rand returns the jitter's random numbers in [0, 1); nil means
	// math/rand/v2. A test sets it to replay a run's waits.
	Rand func() float64
}

// Wait returns the jittered wait after the n-th failure in a row (n ≥ 1).
func (b Backoff) Wait(n int) time.Duration {
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	return spread(b.Base(n), b.jitter(), r())
}

// Base returns the wait after the n-th failure before jitter.
func (b Backoff) Base(n int) time.Duration {
	n = max(n, 1)
	if len(b.Steps) > 0 {
		return b.Steps[min(n, len(b.Steps))-1]
	}
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, max(b.Max, b.Min))
}

// Longest returns the longest wait the schedule can give, jitter included.
func (b Backoff) Longest() time.Duration {
	longest := max(b.Max, b.Min)
	if len(b.Steps) > 0 {
		longest = b.Steps[len(b.Steps)-1]
	}
	return longest + time.Duration(float64(longest)*b.jitter())
}

func (b Backoff) jitter() float64 {
	switch {
	case b.Jitter == 0:
		return DefaultJitter
	case b.Jitter < 0:
		return 0
	}
	return b.Jitter
}

// Jitter spreads d by up to ±frac of it.
func Jitter(d time.Duration, frac float64) time.Duration {
	return spread(d, frac, rand.Float64())
}

// spread moves d by (2u-1)·frac of it, for u in [0, 1).
func spread(d time.Duration, frac, u float64) time.Duration {
	if d <= 0 || frac <= 0 {
		return d
	}
	return d + time.Duration((u*2-1)*float64(d)*frac)
}
