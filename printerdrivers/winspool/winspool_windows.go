//go:build windows

package winspool

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/storeprint/storeprint/gateway"
)

// golang.org/x/sys/windows has no print spooler calls: they come from
// winspool.drv.
var (
	winspoolDLL          = windows.NewLazySystemDLL("winspool.drv")
	procOpenPrinterW     = winspoolDLL.NewProc("OpenPrinterW")
	procClosePrinter     = winspoolDLL.NewProc("ClosePrinter")
	procGetPrinterW      = winspoolDLL.NewProc("GetPrinterW")
	procStartDocPrinterW = winspoolDLL.NewProc("StartDocPrinterW")
	procStartPagePrinter = winspoolDLL.NewProc("StartPagePrinter")
	procWritePrinter     = winspoolDLL.NewProc("WritePrinter")
	procEndPagePrinter   = winspoolDLL.NewProc("EndPagePrinter")
	procEndDocPrinter    = winspoolDLL.NewProc("EndDocPrinter")
	procGetJobW          = winspoolDLL.NewProc("GetJobW")
	procSetJobW          = winspoolDLL.NewProc("SetJobW")
)

// New returns a driver for the Windows print queue cfg.Address, through
// the system's print spooler.
func New(cfg gateway.PrinterConfig, storeID string) (*Printer, error) {
	if err := winspoolDLL.Load(); err != nil {
		return nil, fmt.Errorf("load winspool.drv: %w", err)
	}
	return NewWithSpooler(System{}, cfg, storeID), nil
}

// System is the Windows print spooler, through winspool.drv.
type System struct{}

var _ Spooler = System{}

// errNoCode stands for the last error of a call that failed without
// setting one.
var errNoCode = errors.New("failed without an error code")

// callErr returns the error of a failed call: its last error, or
// errNoCode when the call set none.
func callErr(name string, e error) error {
	var errno syscall.Errno
	if errors.As(e, &errno) && errno == 0 {
		e = errNoCode
	}
	return fmt.Errorf("%s: %w", name, e)
}

func (System) OpenPrinter(name string) (Handle, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, fmt.Errorf("OpenPrinter: queue name: %w", err)
	}
	var h Handle
	r, _, e := procOpenPrinterW.Call(uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&h)), 0)
	if r == 0 {
		return 0, callErr("OpenPrinter", e)
	}
	return h, nil
}

func (System) ClosePrinter(h Handle) error {
	if r, _, e := procClosePrinter.Call(uintptr(h)); r == 0 {
		return callErr("ClosePrinter", e)
	}
	return nil
}

// printerInfo2 is PRINTER_INFO_2W.
type printerInfo2 struct {
	ServerName, PrinterName, ShareName, PortName, DriverName, Comment, Location *uint16
	DevMode                                                                     unsafe.Pointer
	SepFile, PrintProcessor, Datatype, Parameters                               *uint16
	SecurityDescriptor                                                          unsafe.Pointer
	Attributes, Priority, DefaultPriority, StartTime, UntilTime, Status, Jobs   uint32
	AveragePPM                                                                  uint32
}

// jobInfo1 is JOB_INFO_1W.
type jobInfo1 struct {
	JobID                                                        uint32
	PrinterName, MachineName, UserName, Document, Datatype, Text *uint16
	Status, Priority, Position, TotalPages, PagesPrinted         uint32
	Submitted                                                    windows.Systemtime
}

// sized calls a Get* function that fills a caller's buffer: once to learn
// the size, once to fill it. The buffer is 8-byte aligned for the
// structure at its start.
func sized(name string, call func(buf *uint64, size uint32, needed *uint32) (uintptr, error)) ([]uint64, error) {
	var needed uint32
	r, e := call(nil, 0, &needed)
	if r == 0 && !errors.Is(e, windows.ERROR_INSUFFICIENT_BUFFER) {
		return nil, callErr(name, e)
	}
	buf := make([]uint64, (needed+7)/8+1)
	if r, e := call(&buf[0], uint32(len(buf)*8), &needed); r == 0 {
		return nil, callErr(name, e)
	}
	return buf, nil
}

func (System) GetPrinter(h Handle) (PrinterInfo, error) {
	buf, err := sized("GetPrinter", func(buf *uint64, size uint32, needed *uint32) (uintptr, error) {
		r, _, e := procGetPrinterW.Call(uintptr(h), 2, uintptr(unsafe.Pointer(buf)), uintptr(size), uintptr(unsafe.Pointer(needed)))
		return r, e
	})
	if err != nil {
		return PrinterInfo{}, err
	}
	pi := (*printerInfo2)(unsafe.Pointer(&buf[0]))
	return PrinterInfo{Status: pi.Status, Attributes: pi.Attributes, Jobs: pi.Jobs}, nil
}

// docInfo1 is DOC_INFO_1W.
type docInfo1 struct {
	DocName, OutputFile, Datatype *uint16
}

func (System) StartDocPrinter(h Handle, doc DocInfo) (uint32, error) {
	var di docInfo1
	var err error
	if di.DocName, err = windows.UTF16PtrFromString(doc.DocName); err != nil {
		return 0, fmt.Errorf("StartDocPrinter: document name: %w", err)
	}
	if doc.OutputFile != "" {
		if di.OutputFile, err = windows.UTF16PtrFromString(doc.OutputFile); err != nil {
			return 0, fmt.Errorf("StartDocPrinter: output file: %w", err)
		}
	}
	if di.Datatype, err = windows.UTF16PtrFromString(doc.Datatype); err != nil {
		return 0, fmt.Errorf("StartDocPrinter: datatype: %w", err)
	}
	r, _, e := procStartDocPrinterW.Call(uintptr(h), 1, uintptr(unsafe.Pointer(&di)))
	if r == 0 {
		return 0, callErr("StartDocPrinter", e)
	}
	return uint32(r), nil
}

func (System) StartPagePrinter(h Handle) error {
	if r, _, e := procStartPagePrinter.Call(uintptr(h)); r == 0 {
		return callErr("StartPagePrinter", e)
	}
	return nil
}

func (System) WritePrinter(h Handle, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var written uint32
	r, _, e := procWritePrinter.Call(uintptr(h), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&written)))
	if r == 0 {
		return int(written), callErr("WritePrinter", e)
	}
	return int(written), nil
}

func (System) EndPagePrinter(h Handle) error {
	if r, _, e := procEndPagePrinter.Call(uintptr(h)); r == 0 {
		return callErr("EndPagePrinter", e)
	}
	return nil
}

func (System) EndDocPrinter(h Handle) error {
	if r, _, e := procEndDocPrinter.Call(uintptr(h)); r == 0 {
		return callErr("EndDocPrinter", e)
	}
	return nil
}

// GetJob reads a job; a job the spooler no longer has is ErrJobNotFound.
//
// What Microsoft documents (GetJob, JOB_INFO_1, and GetJob's server side,
// RpcGetJob in [MS-RPRN] 3.1.4.3.2): GetJob returns nonzero on success and
// zero on failure, with the reason in GetLastError. The first call, with
// no buffer, fails with ERROR_INSUFFICIENT_BUFFER and the size needed. A
// job id that is not in the queue's list of jobs fails with
// ERROR_INVALID_PARAMETER. A job stays in the list while it spools and
// prints; once printed it leaves the list, unless the queue keeps printed
// documents ("Keep printed documents", PRINTER_ATTRIBUTE_KEEPPRINTEDJOBS):
// then it stays with JOB_STATUS_PRINTED (and, since Vista,
// JOB_STATUS_RETAINED) until it is deleted. JOB_STATUS_COMPLETE means the
// data was sent to the printer, not that it has printed.
//
// Wine's spooler (8.0) forgets a job at EndDocPrinter, once the job is
// handed to CUPS, and its GetJobW then fails without setting an error
// code. A failure without a code is read as ERROR_INVALID_PARAMETER is:
// the spooler no longer knows the job. Whether it printed is then unknown,
// as for a job gone from a Windows queue that does not keep printed
// documents.
func (System) GetJob(h Handle, jobID uint32) (JobInfo, error) {
	buf, err := sized("GetJob", func(buf *uint64, size uint32, needed *uint32) (uintptr, error) {
		r, _, e := procGetJobW.Call(uintptr(h), uintptr(jobID), 1, uintptr(unsafe.Pointer(buf)), uintptr(size), uintptr(unsafe.Pointer(needed)))
		return r, e
	})
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) || errors.Is(err, errNoCode) {
		return JobInfo{}, fmt.Errorf("GetJob %d: %w", jobID, ErrJobNotFound)
	}
	if err != nil {
		return JobInfo{}, err
	}
	ji := (*jobInfo1)(unsafe.Pointer(&buf[0]))
	return JobInfo{Status: ji.Status, StatusText: windows.UTF16PtrToString(ji.Text)}, nil
}

func (System) SetJob(h Handle, jobID uint32, command uint32) error {
	r, _, e := procSetJobW.Call(uintptr(h), uintptr(jobID), 0, 0, uintptr(command))
	if r == 0 {
		err := callErr("SetJob", e)
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return fmt.Errorf("SetJob %d: %w", jobID, ErrJobNotFound)
		}
		return err
	}
	return nil
}
