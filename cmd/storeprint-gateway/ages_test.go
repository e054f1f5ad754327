package main

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeprint/storeprint/gateway/gatewaytest"
	"github.com/storeprint/storeprint/internal/clock"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// skipClock is the system's clock, wall and monotonic both moved ahead
// together when the test says time has passed.
type skipClock struct {
	clock.Real
	ahead atomic.Int64
}

func (c *skipClock) Now() time.Time        { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *skipClock) Mono() time.Duration   { return c.Real.Mono() + time.Duration(c.ahead.Load()) }
func (c *skipClock) Skip(d time.Duration)  { c.ahead.Add(int64(d)) }
func (c *skipClock) Since(t time.Time) int { return int(c.Now().Sub(t) / time.Second) }

// A flagged ticket's age counts from its acceptance, on the board and
// after a restart: on a gateway up 20 s before the order it is not the
// gateway's uptime.
func TestMain_WaitedSinceAcceptance(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultLostAck)
	cfg := writeConfig(t, gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}}))
	clk := &skipClock{}
	start := func() (string, func()) {
		m, stop := startGateway(t, cfg, func(m *Main) { m.Clock = clk })
		return m.HTTP.URL(), stop
	}
	base, stop := start()
	clk.Skip(20 * time.Second) // up a while before the order
	no := "order_age-1_station_hot"
	if code := gatewaytest.Call(t, "POST", base+"/v1/orders", gatewaytest.Order("age-1", "hot"), nil); code != 201 {
		t.Fatalf("order: got %d", code)
	}
	gatewaytest.WaitStatus(t, base, no, "attention_required", 15*time.Second)
	check := func(when string) {
		t.Helper()
		var board struct {
			Alerts []struct {
				TaskNo    string    `json:"task_no"`
				CreatedAt time.Time `json:"created_at"`
				WaitedS   *int      `json:"waited_s"`
			} `json:"alerts"`
		}
		if code := gatewaytest.Call(t, "GET", base+"/v1/board", nil, &board); code != 200 || len(board.Alerts) != 1 || board.Alerts[0].WaitedS == nil {
			t.Fatalf("%s: GET /v1/board: got %d %+v, want the flagged ticket with waited_s", when, code, board.Alerts)
		}
		a := board.Alerts[0]
		real := clk.Since(a.CreatedAt)
		if math.Abs(float64(*a.WaitedS-real)) > 5 {
			t.Errorf("%s: got waited_s %d, want its age since acceptance, %d s (within 5 s)", when, *a.WaitedS, real)
		}
		t.Logf("%s: waited_s %d, age %d s", when, *a.WaitedS, real)
	}
	check("flagged")
	stop()
	clk.Skip(30 * time.Second)
	base, stop = start()
	defer stop()
	check("after a restart")
}
