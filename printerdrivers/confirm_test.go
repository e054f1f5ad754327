package printerdrivers_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
	"github.com/storeprint/storeprint/printerdrivers"
	"github.com/storeprint/storeprint/printerdrivers/escpos"
)

func TestEncodeStream(t *testing.T) {
	t.Parallel()
	tk := storeprint.Ticket{StoreID: "s1", Station: "hot", OrderID: "A1", TaskNo: "order_A1_station_hot",
		Items: []storeprint.Item{{Name: "宫保鸡丁", Qty: 1, Station: "hot"}}, AcceptedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	cfg := gateway.PrinterConfig{ID: "hot-1", Encoding: "gb18030", Width: 42}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		got, err := printerdrivers.EncodeStream(&gateway.PrintJob{ProcessID: "0042"}, tk, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := escpos.Encode(tk, cfg.Encoding, cfg.Width, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %q, want escpos.Encode's %q", got, want)
		}
	})
	t.Run("ErrProcessID", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"", "42", "00a2", "12345"} {
			_, err := printerdrivers.EncodeStream(&gateway.PrintJob{ProcessID: id}, tk, cfg)
			if err == nil || !strings.Contains(err.Error(), "is not four ASCII digits") {
				t.Errorf("process id %q: got %v, want it refused as not four ASCII digits", id, err)
			}
		}
	})
}
