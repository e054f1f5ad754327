package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

// paperSim is a simulated printer whose paper a test reads.
type paperSim interface {
	Printed() []printersim.Ticket
	WaitPrinted(ctx context.Context, n int) ([]printersim.Ticket, error)
}

// One gateway with a printer of each kind that confirms its prints: raw
// TCP, a serial line, Epson ePOS-Print and Star CloudPRNT (polling the
// gateway). Every ticket of every order comes out on its station's
// printer exactly once.
func TestMain_EveryKind(t *testing.T) {
	t.Parallel()
	tcpSim := startSim(t, printersim.FaultNone)
	serialSim, tty := printertest.StartSerial(t, printersim.Options{})
	eposSim := startEPOSSim(t, printersim.FaultNone, true)
	const mac = "00:11:62:0a:0b:0c"
	cfg := writeGatewayConfig(t, t.TempDir(), []string{
		fmt.Sprintf("id = \"hot-1\"\ndriver = \"tcp\"\naddress = %q", tcpSim.addr),
		fmt.Sprintf("id = \"bar-1\"\ndriver = \"serial\"\naddress = %q", tty),
		eposPrinter("cold-1", eposSim.url, true, "hold"),
		fmt.Sprintf("id = \"pass-1\"\ndriver = \"cloudprnt\"\nmac = %q\npassword = \"pass-pw\"\nemulation = \"starprnt\"", mac),
	}, []string{
		"name = \"hot\"\nprinter = \"hot-1\"",
		"name = \"bar\"\nprinter = \"bar-1\"",
		"name = \"cold\"\nprinter = \"cold-1\"",
		"name = \"pass\"\nprinter = \"pass-1\"",
	}, "")
	_, base := runGateway(t, cfg)
	cloudSim := printertest.StartCloudPRNT(t, base+"/v1/cloudprnt", printersim.Options{},
		printersim.CloudPRNTOptions{MAC: mac, User: "pass-1", Password: "pass-pw", PollInterval: 50 * time.Millisecond})

	const orders = 5
	stations := []string{"hot", "bar", "cold", "pass"}
	for i := range orders {
		if code := call(t, "POST", base+"/v1/orders", order(fmt.Sprintf("k-%d", i), stations...), nil); code != 201 {
			t.Fatalf("order %d: got %d, want 201", i, code)
		}
	}
	for i := range orders {
		for _, st := range stations {
			waitStatus(t, base, fmt.Sprintf("order_k-%d_station_%s", i, st), "done", 30*time.Second)
		}
	}
	for st, sim := range map[string]paperSim{"hot": tcpSim, "bar": serialSim, "cold": eposSim, "pass": cloudSim} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := sim.WaitPrinted(ctx, orders)
		cancel()
		if err != nil {
			t.Fatalf("station %s: %v", st, err)
		}
		if len(got) != orders {
			t.Errorf("station %s: got %d tickets, want %d", st, len(got), orders)
		}
		for i := range orders {
			if no := fmt.Sprintf("order_k-%d_station_%s", i, st); countPaper(got, no) != 1 {
				t.Errorf("station %s: got %d tickets of %s, want exactly 1", st, countPaper(got, no), no)
			}
		}
	}
}
