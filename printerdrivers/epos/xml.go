package epos

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/storeprint/storeprint"
)

// Namespaces of the documents.
const (
	Namespace     = "http://www.epson-pos.com/schemas/2011/03/epos-print"
	SOAPNamespace = "http://schemas.xmlsoap.org/soap/envelope/"
)

// ServicePath is the ePOS-Print service on the printer.
const ServicePath = "/cgi-bin/epos/service.cgi"

// TimeLayout is how a ticket shows its acceptance time (as escpos does).
const TimeLayout = "2006-01-02 15:04:05"

// JobID returns the print job id of one attempt of a task: "sp" and 28
// hex digits of a hash of the task_no, the attempt and its process id.
// The printer's job log accepts ids of up to 30 letters and digits; the
// same attempt always gets the same id, so that it can be asked for after
// a restart from what the receipt holds.
func JobID(taskNo string, attempt int, processID string) string {
	sum := sha256.Sum256([]byte(taskNo + "\x00" + strconv.Itoa(attempt) + "\x00" + processID))
	return "sp" + hex.EncodeToString(sum[:14])
}

// Lang returns the text language (the <text lang> attribute) for a
// printer encoding: zh-cn (Simplified Chinese) for gb18030, en otherwise.
func Lang(encoding string) string {
	if strings.EqualFold(encoding, "gb18030") {
		return "zh-cn"
	}
	return "en"
}

// Document renders t as an <epos-print> document, laid out as
// escpos.Encode lays out a ticket: the store, the station in large type,
// order, table and time, REPRINT, BACKUP FROM and COPY OF when they apply,
// a rule, the items in large type with their notes, the order's note, a
// rule, and the task_no alone as the last line, then a feed and a cut.
// Each line is one <text> ending in a line feed; the printer wraps lines
// longer than its paper. Control characters never reach the printer.
func Document(t storeprint.Ticket, lang string, width int, loc *time.Location) ([]byte, error) {
	if strings.TrimSpace(t.TaskNo) == "" {
		return nil, errors.New("epos: ticket has no task_no")
	}
	if width == 0 {
		width = storeprint.DefaultWidth
	}
	if loc == nil {
		loc = time.Local
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<epos-print xmlns="%s">`, Namespace)
	fmt.Fprintf(&b, `<text lang="%s"/>`, lang)
	style := func(attrs string) { fmt.Fprintf(&b, `<text %s/>`, attrs) }
	line := func(s string) {
		b.WriteString("<text>")
		_ = xml.EscapeText(&b, []byte(clean(s)))
		b.WriteString("&#10;</text>")
	}
	rule := strings.Repeat("-", width)

	style(`align="center"`)
	if t.StoreID != "" {
		line(t.StoreID)
	}
	style(`width="2" height="2"`)
	line(t.Station)
	style(`width="1" height="1"`)
	style(`align="left"`)
	if t.OrderID != "" {
		line("Order: " + t.OrderID)
	}
	if t.Table != "" {
		line("Table: " + t.Table)
	}
	if !t.AcceptedAt.IsZero() {
		line("Time: " + t.AcceptedAt.In(loc).Format(TimeLayout))
	}
	if t.Reprint {
		style(`width="2" height="2" em="true"`)
		line("REPRINT")
		style(`width="1" height="1" em="false"`)
	}
	if t.BackupFrom != "" || t.CopyOf != "" {
		style(`em="true"`)
		if t.BackupFrom != "" {
			line("BACKUP FROM " + t.BackupFrom)
		}
		if t.CopyOf != "" {
			line("COPY OF " + t.CopyOf)
		}
		style(`em="false"`)
	}
	line(rule)
	for _, it := range t.Items {
		style(`width="2" height="2"`)
		line(strconv.Itoa(it.Qty) + " x " + it.Name)
		style(`width="1" height="1"`)
		if it.Note != "" {
			line("  - " + it.Note)
		}
	}
	if t.Note != "" {
		line("Note: " + t.Note)
	}
	line(rule)
	b.WriteString("<text>")
	_ = xml.EscapeText(&b, []byte(clean(strings.TrimSpace(t.TaskNo))))
	b.WriteString("</text><feed/><cut type=\"feed\"/></epos-print>")
	return b.Bytes(), nil
}

// EmptyDocument is an <epos-print> with nothing to print: asked alone it
// reads the printer's status, with a print job id the status of that job.
func EmptyDocument() []byte {
	return []byte(fmt.Sprintf(`<epos-print xmlns="%s"></epos-print>`, Namespace))
}

// Envelope wraps an <epos-print> document in the SOAP envelope the
// service takes, with printJobID in its header when not empty.
func Envelope(doc []byte, printJobID string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	fmt.Fprintf(&b, `<s:Envelope xmlns:s="%s">`, SOAPNamespace)
	if printJobID != "" {
		fmt.Fprintf(&b, `<s:Header><parameter xmlns="%s"><printjobid>`, Namespace)
		_ = xml.EscapeText(&b, []byte(printJobID))
		b.WriteString(`</printjobid></parameter></s:Header>`)
	}
	b.WriteString("<s:Body>")
	b.Write(doc)
	b.WriteString("</s:Body></s:Envelope>")
	return b.Bytes()
}

// clean makes s one line of printable text: invalid UTF-8 becomes '?',
// control characters (line breaks too) become spaces.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
}

// Response is the printer's <response>.
type Response struct {
	Success    bool
	Code       string // empty on success; an error code (Code* constants)
	Status     uint32 // Status* bits
	Battery    uint32
	PrintJobID string // the <printjobid> the printer returned, if any
}

// MaxResponse bounds the size of a response document the driver reads.
const MaxResponse = 64 << 10

// ErrNoResponse is ParseResponse's error for a document without a
// <response> element.
var ErrNoResponse = errors.New("epos: no <response> in the answer")

// ParseResponse reads a response document: a SOAP envelope, or a bare
// <response>, from r (at most MaxResponse bytes).
func ParseResponse(r io.Reader) (Response, error) {
	d := xml.NewDecoder(io.LimitReader(r, MaxResponse))
	var resp Response
	found, inJobID := false, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Response{}, fmt.Errorf("epos: read response: %w", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "response":
				if found {
					continue
				}
				found = true
				for _, a := range tok.Attr {
					switch a.Name.Local {
					case "success":
						resp.Success = a.Value == "true" || a.Value == "1"
					case "code":
						resp.Code = strings.TrimSpace(a.Value)
					case "status":
						v, err := strconv.ParseUint(strings.TrimSpace(a.Value), 10, 32)
						if err != nil {
							return Response{}, fmt.Errorf("epos: response status %q is not a number", a.Value)
						}
						resp.Status = uint32(v)
					case "battery":
						v, err := strconv.ParseUint(strings.TrimSpace(a.Value), 10, 32)
						if err == nil {
							resp.Battery = uint32(v)
						}
					}
				}
			case "printjobid":
				inJobID = true
			}
		case xml.CharData:
			if inJobID {
				resp.PrintJobID += strings.TrimSpace(string(tok))
			}
		case xml.EndElement:
			if tok.Name.Local == "printjobid" {
				inJobID = false
			}
		}
	}
	if !found {
		return Response{}, ErrNoResponse
	}
	return resp, nil
}

// Status bits of a response (ePOS-Print's ASB_* values).
const (
	StatusNoResponse     = 0x00000001 // no response from the TM printer
	StatusPrintSuccess   = 0x00000002 // printing completed
	StatusDrawerKick     = 0x00000004
	StatusOffline        = 0x00000008
	StatusCoverOpen      = 0x00000020
	StatusPaperFeed      = 0x00000040 // paper fed by the feed switch
	StatusWaitOnline     = 0x00000100 // waiting to be brought back online
	StatusPanelSwitch    = 0x00000200
	StatusMechanicalErr  = 0x00000400
	StatusAutocutterErr  = 0x00000800
	StatusUnrecoverErr   = 0x00002000
	StatusAutorecoverErr = 0x00004000
	StatusReceiptNearEnd = 0x00020000
	StatusReceiptEnd     = 0x00080000
	StatusSpoolerStopped = 0x80000000
)

// PrinterState decodes a response's status bits. When several
// conditions hold, the one a person must fix first wins, as in
// escpos.ParseStatus: cover open, then paper end, then anything that
// keeps it from printing (no response, offline, an error, waiting to be
// brought online, a stopped spooler).
func PrinterState(status uint32) storeprint.PrinterStatus {
	const stopped = StatusNoResponse | StatusOffline | StatusWaitOnline | StatusMechanicalErr |
		StatusAutocutterErr | StatusUnrecoverErr | StatusAutorecoverErr | StatusSpoolerStopped
	st := storeprint.PrinterStatus{PaperNearEnd: status&(StatusReceiptNearEnd|StatusReceiptEnd) != 0}
	switch {
	case status&StatusNoResponse != 0:
		// Nothing of the rest is current.
		return storeprint.PrinterStatus{State: storeprint.PrinterOffline}
	case status&StatusCoverOpen != 0:
		st.State = storeprint.PrinterCoverOpen
	case status&StatusReceiptEnd != 0:
		st.State = storeprint.PrinterPaperEnd
	case status&stopped != 0:
		st.State = storeprint.PrinterOffline
	default:
		st.State = storeprint.PrinterReady
	}
	return st
}

// StatusBits is what a printer in st reports, the inverse of
// PrinterState; printed adds StatusPrintSuccess.
func StatusBits(st storeprint.PrinterStatus, printed bool) uint32 {
	var b uint32
	if printed {
		b |= StatusPrintSuccess
	}
	if st.PaperNearEnd {
		b |= StatusReceiptNearEnd
	}
	switch st.State {
	case storeprint.PrinterOffline:
		b |= StatusOffline
	case storeprint.PrinterCoverOpen:
		b |= StatusCoverOpen | StatusOffline
	case storeprint.PrinterPaperEnd:
		b |= StatusReceiptEnd | StatusReceiptNearEnd | StatusOffline
	case storeprint.PrinterUnknown:
		b |= StatusNoResponse
	}
	return b
}

// Error codes of a response.
const (
	CodeAutomatical      = "EPTR_AUTOMATICAL"
	CodeBatteryLow       = "EPTR_BATTERY_LOW"
	CodeCoverOpen        = "EPTR_COVER_OPEN"
	CodeCutter           = "EPTR_CUTTER"
	CodeMechanical       = "EPTR_MECHANICAL"
	CodeRecEmpty         = "EPTR_REC_EMPTY"
	CodeUnrecoverable    = "EPTR_UNRECOVERABLE"
	CodeSchemaError      = "SchemaError"
	CodeDeviceNotFound   = "DeviceNotFound"
	CodePrintSystemError = "PrintSystemError"
	CodeBadPort          = "EX_BADPORT"
	CodeTimeout          = "EX_TIMEOUT"
	CodeSpooler          = "EX_SPOOLER"
	CodeDeviceBusy       = "EX_DEVICE_BUSY"
	CodeENPCTimeout      = "EX_ENPC_TIMEOUT"
	CodeJobNotFound      = "JobNotFound"
	CodePrinting         = "Printing"
	CodeJobSpooling      = "JobSpooling"
	CodeTooManyRequests  = "TooManyRequests"
	CodeTooLarge         = "RequestEntityTooLarge"
	CodeWaitEject        = "ERROR_WAIT_EJECT"
	CodeDeviceBusyLegacy = "ERROR_DEVICE_BUSY" // what Epson's SDK reports for EX_ENPC_TIMEOUT
)

// Failure is what a failed print's code says about the ticket.
type Failure int

const (
	// FailureNotPrinted: the printer refused or gave up on the job
	// before printing it: the device is not there, it did not become
	// ready within the request's timeout, its queue is full, it cannot
	// read the document.
	FailureNotPrinted Failure = iota + 1
	// FailureMayHavePrinted: printing stopped on an error (cover opened,
	// paper ran out, cutter or mechanical error, a port error): part of
	// the ticket may be on paper.
	FailureMayHavePrinted
)

// Classify says what a failed print response (its code and status bits)
// means for the ticket and the printer state it points to ("" when it
// points to none).
//
// EX_TIMEOUT is the request's timeout passing: the printer cancels the
// job and prints what it had interpreted by then. With the printer not
// ready all along (offline, not answering) nothing printed; with the
// printer ready, printing may have been under way.
func Classify(code string, status uint32) (Failure, storeprint.PrinterState) {
	st := PrinterState(status)
	switch code {
	case CodeTimeout:
		if st.State == storeprint.PrinterReady {
			return FailureMayHavePrinted, ""
		}
		return FailureNotPrinted, st.State
	case CodeDeviceNotFound, CodeENPCTimeout, CodeDeviceBusy, CodeDeviceBusyLegacy:
		return FailureNotPrinted, storeprint.PrinterOffline
	case CodeSpooler, CodeTooManyRequests, CodeTooLarge, CodeSchemaError:
		return FailureNotPrinted, ""
	case CodeRecEmpty:
		return FailureMayHavePrinted, storeprint.PrinterPaperEnd
	case CodeCoverOpen:
		return FailureMayHavePrinted, storeprint.PrinterCoverOpen
	case CodeCutter, CodeMechanical, CodeUnrecoverable, CodeAutomatical, CodeBatteryLow, CodeWaitEject:
		return FailureMayHavePrinted, storeprint.PrinterOffline
	}
	return FailureMayHavePrinted, ""
}
