package authlimit

import (
	"math"
	"net"
	"net/http"
	"strconv"
	stdsync "sync"
	"time"

	"golang.org/x/time/rate"
)

// maxAddrs bounds the addresses remembered; past it, addresses back at a
// full allowance are forgotten.
const maxAddrs = 4096

// Limiter allows each address Burst failures at once, then one failure per
// Every. Successes cost nothing.
type Limiter struct {
	every time.Duration
	burst int
	now   func() time.Time

	mu    stdsync.Mutex
	addrs map[string]*rate.Limiter
}

// New returns a limiter of burst failures, then one per every, on the clock
// now (time.Now when nil).
func New(burst int, every time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{every: every, burst: burst, now: now, addrs: map[string]*rate.Limiter{}}
}

// Wait returns how long addr must wait before its next try, 0 when it may
// try now.
func (l *Limiter) Wait(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.addrs[addr]
	if lim == nil {
		return 0
	}
	tokens := lim.TokensAt(l.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(l.every))
}

// Fail counts a failure of addr and reports whether the address must now
// wait (the failure used its last allowance).
func (l *Limiter) Fail(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	lim := l.addrs[addr]
	if lim == nil {
		if len(l.addrs) >= maxAddrs {
			l.forget(now)
		}
		lim = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.addrs[addr] = lim
	}
	lim.AllowN(now, 1)
	return lim.TokensAt(now) < 1
}

// forget drops the addresses back at a full allowance.
func (l *Limiter) forget(now time.Time) {
	for a, lim := range l.addrs {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.addrs, a)
		}
	}
}

// RetryAfter is a Retry-After header value for a wait: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) string {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return strconv.Itoa(s)
}

// Addr is the client address of a request: the remote IP, without its
// port. Headers such as X-Forwarded-For are not trusted.
func Addr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
