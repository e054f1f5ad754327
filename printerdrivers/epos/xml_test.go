package epos_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/printerdrivers/epos"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/epos")

func ticket() storeprint.Ticket {
	return storeprint.Ticket{
		StoreID: "store-001", Station: "hot", OrderID: "1001", Table: "A3", Note: "快一点 <please>",
		Items: []storeprint.Item{
			{Name: "宫保鸡丁", Qty: 2, Station: "hot", Note: "不要花生"},
			{Name: "Fried rice\x1b@", Qty: 1, Station: "hot"},
		},
		AcceptedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		TaskNo:     "order_1001_station_hot",
		Reprint:    true, BackupFrom: "hot-1",
	}
}

func TestDocument(t *testing.T) {
	t.Parallel()
	t.Run("Golden", func(t *testing.T) {
		doc, err := epos.Document(ticket(), epos.Lang("gb18030"), 32, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		got := epos.Envelope(doc, epos.JobID("order_1001_station_hot", 2, "0421"))
		path := filepath.Join("..", "..", "testdata", "epos", "ticket", "request.xml")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read golden file (go test -update writes it): %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("request differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		doc, err := epos.Document(ticket(), "zh-cn", 32, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		req, err := epos.ParseRequest(epos.Envelope(doc, "sp123"))
		if err != nil {
			t.Fatal(err)
		}
		if req.PrintJobID != "sp123" || req.Empty || len(req.Tickets) != 1 || len(req.Tail) != 0 {
			t.Fatalf("got %+v, want one ticket with job id sp123", req)
		}
		lines := req.Tickets[0]
		want := []string{"store-001", "hot", "Order: 1001", "Table: A3", "Time: 2026-03-01 12:00:00", "REPRINT",
			"BACKUP FROM hot-1", strings.Repeat("-", 32), "2 x 宫保鸡丁", "  - 不要花生", "1 x Fried rice @",
			"Note: 快一点 <please>", strings.Repeat("-", 32), "order_1001_station_hot"}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("ErrNoTaskNo", func(t *testing.T) {
		tk := ticket()
		tk.TaskNo = " "
		if _, err := epos.Document(tk, "en", 0, nil); err == nil {
			t.Fatal("got nil, want an error for a ticket without task_no")
		}
	})
}

func TestJobID(t *testing.T) {
	t.Parallel()
	a := epos.JobID("order_1_station_hot", 1, "0001")
	if len(a) != 30 || !strings.HasPrefix(a, "sp") {
		t.Fatalf("got %q, want 30 characters starting with sp", a)
	}
	for _, b := range []string{epos.JobID("order_1_station_hot", 2, "0001"), epos.JobID("order_1_station_hot", 1, "0002"), epos.JobID("order_2_station_hot", 1, "0001")} {
		if a == b {
			t.Fatalf("got the same id %q for another attempt", a)
		}
	}
	if a != epos.JobID("order_1_station_hot", 1, "0001") {
		t.Fatal("got another id for the same attempt")
	}
}

func TestParseResponse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		doc  string
		want epos.Response
		err  bool
	}{
		{"Success", `<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` +
			`<response success="true" code="" status="251658262" battery="0" xmlns="http://www.epson-pos.com/schemas/2011/03/epos-print"/></s:Body></s:Envelope>`,
			epos.Response{Success: true, Status: 251658262}, false},
		{"Failure", `<response success="false" code="EX_BADPORT" status="1" battery="0"/>`,
			epos.Response{Code: "EX_BADPORT", Status: 1}, false},
		{"JobID", `<PrintResponseInfo Version="2.00"><ePOSPrint><Parameter><devid>local_printer</devid><printjobid>ABC123</printjobid></Parameter>` +
			`<PrintResponse><response success="1" code="" status="2" battery="0"/></PrintResponse></ePOSPrint></PrintResponseInfo>`,
			epos.Response{Success: true, Status: 2, PrintJobID: "ABC123"}, false},
		{"ErrNoResponse", `<html><body>Not found</body></html>`, epos.Response{}, true},
		{"ErrStatus", `<response success="true" status="lots"/>`, epos.Response{}, true},
		{"ErrXML", `<response success="true"`, epos.Response{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := epos.ParseResponse(strings.NewReader(tt.doc))
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestPrinterState(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		bits uint32
		want storeprint.PrinterStatus
	}{
		{epos.StatusPrintSuccess, storeprint.PrinterStatus{State: storeprint.PrinterReady}},
		{epos.StatusReceiptNearEnd, storeprint.PrinterStatus{State: storeprint.PrinterReady, PaperNearEnd: true}},
		{epos.StatusOffline | epos.StatusCoverOpen | epos.StatusReceiptEnd, storeprint.PrinterStatus{State: storeprint.PrinterCoverOpen, PaperNearEnd: true}},
		{epos.StatusOffline | epos.StatusReceiptEnd, storeprint.PrinterStatus{State: storeprint.PrinterPaperEnd, PaperNearEnd: true}},
		{epos.StatusNoResponse | epos.StatusCoverOpen, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{epos.StatusAutocutterErr, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
		{epos.StatusSpoolerStopped, storeprint.PrinterStatus{State: storeprint.PrinterOffline}},
	} {
		if got := epos.PrinterState(tt.bits); got != tt.want {
			t.Errorf("PrinterState(%#x): got %+v, want %+v", tt.bits, got, tt.want)
		}
	}
	// StatusBits is its inverse for every state.
	for _, st := range []storeprint.PrinterStatus{
		{State: storeprint.PrinterReady}, {State: storeprint.PrinterReady, PaperNearEnd: true},
		{State: storeprint.PrinterOffline}, {State: storeprint.PrinterCoverOpen},
		{State: storeprint.PrinterPaperEnd, PaperNearEnd: true},
	} {
		if got := epos.PrinterState(epos.StatusBits(st, false)); got != st {
			t.Errorf("PrinterState(StatusBits(%+v)): got %+v", st, got)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code   string
		status uint32
		want   epos.Failure
		state  storeprint.PrinterState
	}{
		{epos.CodeDeviceNotFound, 0, epos.FailureNotPrinted, storeprint.PrinterOffline},
		{epos.CodeTimeout, epos.StatusOffline, epos.FailureNotPrinted, storeprint.PrinterOffline},
		{epos.CodeTimeout, epos.StatusPrintSuccess, epos.FailureMayHavePrinted, ""},
		{epos.CodeSpooler, 0, epos.FailureNotPrinted, ""},
		{epos.CodeRecEmpty, epos.StatusReceiptEnd, epos.FailureMayHavePrinted, storeprint.PrinterPaperEnd},
		{epos.CodeCoverOpen, 0, epos.FailureMayHavePrinted, storeprint.PrinterCoverOpen},
		{epos.CodeCutter, 0, epos.FailureMayHavePrinted, storeprint.PrinterOffline},
		{"SomethingNew", 0, epos.FailureMayHavePrinted, ""},
	} {
		f, st := epos.Classify(tt.code, tt.status)
		if f != tt.want || st != tt.state {
			t.Errorf("Classify(%s, %#x): got %v/%q, want %v/%q", tt.code, tt.status, f, st, tt.want, tt.state)
		}
	}
}

func TestParseRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body string
	}{
		{"ErrNamespace", `<epos-print xmlns="urn:other"><text>x</text></epos-print>`},
		{"ErrUnknownElement", `<epos-print xmlns="` + epos.Namespace + `"><launch-missiles/></epos-print>`},
		{"ErrNoDocument", `<s:Envelope xmlns:s="` + epos.SOAPNamespace + `"><s:Body/></s:Envelope>`},
		{"ErrFeed", `<epos-print xmlns="` + epos.Namespace + `"><feed line="many"/></epos-print>`},
		{"ErrXML", `<epos-print xmlns="` + epos.Namespace + `"><text>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := epos.ParseRequest([]byte(tt.body)); err == nil {
				t.Fatalf("got nil, want an error for %s", tt.body)
			}
		})
	}
	t.Run("Empty", func(t *testing.T) {
		req, err := epos.ParseRequest(epos.Envelope(epos.EmptyDocument(), "sp1"))
		if err != nil || !req.Empty || req.PrintJobID != "sp1" {
			t.Fatalf("got %+v, %v; want an empty request for job sp1", req, err)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`<response success="true" code="" status="2" battery="0"/>`))
	f.Add(epos.ResponseDocument("local_printer", "sp1", epos.Response{Code: epos.CodeJobNotFound, Status: 8}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := epos.ParseResponse(bytes.NewReader(b))
		if err != nil {
			return
		}
		// What parses goes back and forth unchanged.
		again, err := epos.ParseResponse(bytes.NewReader(epos.ResponseDocument("d", r.PrintJobID, r)))
		if err != nil || again.Success != r.Success || again.Status != r.Status {
			t.Fatalf("round trip of %+v: got %+v, %v", r, again, err)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	doc, _ := epos.Document(ticket(), "zh-cn", 48, time.UTC)
	f.Add(epos.Envelope(doc, "sp1"))
	f.Add(epos.EmptyDocument())
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := epos.ParseRequest(b)
		if err != nil {
			return
		}
		for _, lines := range req.Tickets {
			for _, l := range lines {
				if strings.Contains(l, "\n") {
					t.Fatalf("line %q holds a line break", l)
				}
			}
		}
	})
}
