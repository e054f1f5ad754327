package winspooltest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/storeprint/storeprint/printerdrivers/escpos"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

// Errors the fake returns, named after the Windows errors they stand for.
var (
	ErrInvalidPrinterName = errors.New("the printer name is invalid (ERROR_INVALID_PRINTER_NAME)")
	ErrInvalidHandle      = errors.New("the handle is invalid (ERROR_INVALID_HANDLE)")
	ErrUnavailable        = errors.New("the RPC server is unavailable (RPC_S_SERVER_UNAVAILABLE)")
	ErrInvalidCall        = errors.New("the call is out of order (ERROR_INVALID_PARAMETER)")
)

// Completion says when the fake reports a job printed and complete.
type Completion int

const (
	// CompleteOnDelivery: once the job's last byte reached the printer,
	// as the Windows spooler does.
	CompleteOnDelivery Completion = iota
	// CompleteOnConfirm: only once the printer answered a process ID
	// request (GS ( H) the fake sends after the job, as a printer driver
	// with a status monitor reports completion. A printer that never
	// answers leaves the job printing.
	CompleteOnConfirm
)

// QueueOptions configure a queue.
type QueueOptions struct {
	Completion Completion
	// RemoveDone removes a job from the queue as soon as it is complete,
	// as a queue without "Keep printed documents" does.
	RemoveDone bool
	// Manual sends nothing to the printer: the test moves jobs along
	// with SetJobStatus and RemoveJob.
	Manual bool
}

// Spooler is a fake print spooler; it implements winspool.Spooler. Its
// methods are safe for concurrent use.
type Spooler struct {
	mu      sync.Mutex
	queues  map[string]*Queue
	handles map[winspool.Handle]*handle
	next    winspool.Handle
	nextJob uint32
	fail    map[string]error // call name → the error its next call returns
}

var _ winspool.Spooler = (*Spooler)(nil)

// New returns a spooler without queues.
func New() *Spooler {
	return &Spooler{
		queues:  map[string]*Queue{},
		handles: map[winspool.Handle]*handle{},
		next:    0x100,
		nextJob: 1,
		fail:    map[string]error{},
	}
}

// handle is an open printer handle.
type handle struct {
	q    *Queue
	doc  *Job // the document being written, between StartDoc and EndDoc
	page bool // inside StartPage/EndPage
}

// Queue is one print queue with a simulated printer behind it.
type Queue struct {
	s    *Spooler
	name string
	sim  *printersim.Printer
	opts QueueOptions

	// Guarded by s.mu.
	status     uint32 // set by the test, added to what the printer shows
	attributes uint32
	jobs       []*Job        // in the queue, oldest first
	changed    chan struct{} // closed and replaced when a job changes

	work chan struct{} // wakes the port monitor; capacity 1
	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	devMu   sync.Mutex
	dev     net.Conn // the port monitor's end of the pipe to the printer; nil: not connected
	pending map[string]*Job
}

// Job is one document in a queue.
type Job struct {
	ID  uint32
	Doc winspool.DocInfo

	// Guarded by the spooler's mutex.
	data    []byte
	status  uint32
	text    string
	ended   bool // EndDocPrinter was called
	sent    bool // taken by the port monitor
	removed bool
}

// AddPrinter adds a queue named name printing on sim, and starts its port
// monitor. Close stops it; it does not close sim.
func (s *Spooler) AddPrinter(name string, sim *printersim.Printer, opts QueueOptions) *Queue {
	q := &Queue{
		s: s, name: name, sim: sim, opts: opts,
		changed: make(chan struct{}),
		work:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		pending: map[string]*Job{},
	}
	s.mu.Lock()
	s.queues[name] = q
	s.mu.Unlock()
	q.wg.Add(1)
	go q.monitor()
	return q
}

// Fail makes the next call named call (a winspool.Spooler method name,
// such as "WritePrinter") return err.
func (s *Spooler) Fail(call string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[call] = err
}

// OpenHandles returns how many printer handles are open.
func (s *Spooler) OpenHandles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handles)
}

// injected returns the error set by Fail for call, once; s.mu is held.
func (s *Spooler) injected(call string) error {
	err := s.fail[call]
	delete(s.fail, call)
	return err
}

// reachable reports whether q can be reached: a printer that is down is a
// queue the spooler cannot reach (a shared queue whose print server is
// off). s.mu is held.
func (q *Queue) reachable() error {
	if q.sim.Fault() == printersim.FaultDown {
		return fmt.Errorf("queue %q: %w", q.name, ErrUnavailable)
	}
	return nil
}

// lookup returns the handle h; s.mu is held.
func (s *Spooler) lookup(call string, h winspool.Handle) (*handle, error) {
	if err := s.injected(call); err != nil {
		return nil, err
	}
	hd := s.handles[h]
	if hd == nil {
		return nil, fmt.Errorf("%s: %w", call, ErrInvalidHandle)
	}
	if err := hd.q.reachable(); err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	return hd, nil
}

func (s *Spooler) OpenPrinter(name string) (winspool.Handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.injected("OpenPrinter"); err != nil {
		return 0, err
	}
	q := s.queues[name]
	if q == nil {
		return 0, fmt.Errorf("OpenPrinter %q: %w", name, ErrInvalidPrinterName)
	}
	if err := q.reachable(); err != nil {
		return 0, fmt.Errorf("OpenPrinter: %w", err)
	}
	s.next++
	s.handles[s.next] = &handle{q: q}
	return s.next, nil
}

func (s *Spooler) ClosePrinter(h winspool.Handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd := s.handles[h]
	if hd == nil {
		return fmt.Errorf("ClosePrinter: %w", ErrInvalidHandle)
	}
	delete(s.handles, h)
	if hd.doc != nil && !hd.doc.ended {
		// A document left open is discarded with its handle.
		hd.q.remove(hd.doc)
	}
	return s.injected("ClosePrinter")
}

func (s *Spooler) GetPrinter(h winspool.Handle) (winspool.PrinterInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("GetPrinter", h)
	if err != nil {
		return winspool.PrinterInfo{}, err
	}
	q := hd.q
	st := q.status
	switch q.sim.Fault() {
	case printersim.FaultOffline:
		st |= winspool.PrinterStatusOffline
	case printersim.FaultPaperEnd:
		st |= winspool.PrinterStatusPaperOut
	case printersim.FaultCoverOpen:
		st |= winspool.PrinterStatusDoorOpen
	}
	return winspool.PrinterInfo{Status: st, Attributes: q.attributes, Jobs: uint32(len(q.jobs))}, nil
}

func (s *Spooler) StartDocPrinter(h winspool.Handle, doc winspool.DocInfo) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("StartDocPrinter", h)
	if err != nil {
		return 0, err
	}
	if hd.doc != nil {
		return 0, fmt.Errorf("StartDocPrinter: a document is open: %w", ErrInvalidCall)
	}
	if doc.Datatype != winspool.Datatype {
		return 0, fmt.Errorf("StartDocPrinter: datatype %q: this fake takes RAW only: %w", doc.Datatype, ErrInvalidCall)
	}
	j := &Job{ID: s.nextJob, Doc: doc, status: winspool.JobStatusSpooling}
	s.nextJob++
	hd.doc = j
	hd.q.jobs = append(hd.q.jobs, j)
	hd.q.signal()
	return j.ID, nil
}

func (s *Spooler) StartPagePrinter(h winspool.Handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("StartPagePrinter", h)
	if err != nil {
		return err
	}
	if hd.doc == nil || hd.page {
		return fmt.Errorf("StartPagePrinter: %w", ErrInvalidCall)
	}
	hd.page = true
	return nil
}

func (s *Spooler) WritePrinter(h winspool.Handle, b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("WritePrinter", h)
	if err != nil {
		return 0, err
	}
	if hd.doc == nil || !hd.page {
		return 0, fmt.Errorf("WritePrinter: no page started: %w", ErrInvalidCall)
	}
	hd.doc.data = append(hd.doc.data, b...)
	return len(b), nil
}

func (s *Spooler) EndPagePrinter(h winspool.Handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("EndPagePrinter", h)
	if err != nil {
		return err
	}
	if !hd.page {
		return fmt.Errorf("EndPagePrinter: %w", ErrInvalidCall)
	}
	hd.page = false
	return nil
}

func (s *Spooler) EndDocPrinter(h winspool.Handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("EndDocPrinter", h)
	if err != nil {
		return err
	}
	if hd.doc == nil || hd.page {
		return fmt.Errorf("EndDocPrinter: %w", ErrInvalidCall)
	}
	j := hd.doc
	hd.doc = nil
	j.ended = true
	j.status &^= winspool.JobStatusSpooling
	hd.q.signal()
	if !hd.q.opts.Manual {
		select {
		case hd.q.work <- struct{}{}:
		default:
		}
	}
	return nil
}

func (s *Spooler) GetJob(h winspool.Handle, jobID uint32) (winspool.JobInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("GetJob", h)
	if err != nil {
		return winspool.JobInfo{}, err
	}
	j := hd.q.job(jobID)
	if j == nil {
		return winspool.JobInfo{}, fmt.Errorf("GetJob %d: %w", jobID, winspool.ErrJobNotFound)
	}
	return winspool.JobInfo{Status: j.status, StatusText: j.text}, nil
}

func (s *Spooler) SetJob(h winspool.Handle, jobID uint32, command uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hd, err := s.lookup("SetJob", h)
	if err != nil {
		return err
	}
	if command != winspool.JobControlDelete {
		return fmt.Errorf("SetJob: command %d: this fake knows JOB_CONTROL_DELETE only: %w", command, ErrInvalidCall)
	}
	j := hd.q.job(jobID)
	if j == nil {
		return fmt.Errorf("SetJob %d: %w", jobID, winspool.ErrJobNotFound)
	}
	hd.q.remove(j)
	return nil
}

// job returns the job id in the queue; s.mu is held.
func (q *Queue) job(id uint32) *Job {
	for _, j := range q.jobs {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// remove takes j out of the queue; s.mu is held.
func (q *Queue) remove(j *Job) {
	for i, qj := range q.jobs {
		if qj == j {
			q.jobs = append(q.jobs[:i:i], q.jobs[i+1:]...)
			break
		}
	}
	j.removed = true
	q.signal()
}

// signal wakes WaitJob; s.mu is held.
func (q *Queue) signal() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// SetPrinterStatus sets PRINTER_INFO_2 Status bits and Attributes,
// added to what the printer's fault shows.
func (q *Queue) SetPrinterStatus(status, attributes uint32) {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	q.status, q.attributes = status, attributes
}

// SetJobStatus sets a job's status bits and the port monitor's message.
func (q *Queue) SetJobStatus(id uint32, status uint32, text string) error {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	j := q.job(id)
	if j == nil {
		return fmt.Errorf("job %d: %w", id, winspool.ErrJobNotFound)
	}
	j.status, j.text = status, text
	q.signal()
	return nil
}

// RemoveJob takes a job out of the queue, as the spooler does with a
// printed document.
func (q *Queue) RemoveJob(id uint32) error {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	j := q.job(id)
	if j == nil {
		return fmt.Errorf("job %d: %w", id, winspool.ErrJobNotFound)
	}
	q.remove(j)
	return nil
}

// JobView is what a test sees of a job.
type JobView struct {
	ID      uint32
	Doc     winspool.DocInfo
	Data    []byte
	Status  uint32
	Ended   bool
	Removed bool
}

func (j *Job) view() JobView {
	return JobView{ID: j.ID, Doc: j.Doc, Data: append([]byte(nil), j.data...), Status: j.status, Ended: j.ended, Removed: j.removed}
}

// Jobs returns the jobs in the queue, oldest first.
func (q *Queue) Jobs() []JobView {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	var out []JobView
	for _, j := range q.jobs {
		out = append(out, j.view())
	}
	return out
}

// WaitJob waits until a job with the id is in the queue and ended
// (EndDocPrinter) and returns it.
func (q *Queue) WaitJob(ctx context.Context, id uint32) (JobView, error) {
	for {
		q.s.mu.Lock()
		j, ch := q.job(id), q.changed
		var v JobView
		if j != nil {
			v = j.view()
		}
		q.s.mu.Unlock()
		if j != nil && v.Ended {
			return v, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return JobView{}, fmt.Errorf("wait for job %d: %w", id, ctx.Err())
		}
	}
}

// Close stops the port monitor and disconnects the printer.
func (q *Queue) Close() error {
	q.s.mu.Lock()
	select {
	case <-q.done:
		q.s.mu.Unlock()
		return nil
	default:
	}
	close(q.done)
	q.s.mu.Unlock()
	q.devMu.Lock()
	var err error
	if q.dev != nil {
		err = q.dev.Close()
		q.dev = nil
	}
	q.devMu.Unlock()
	q.wg.Wait()
	return err
}

// writeTimeout bounds a write to the printer, which reads all the time.
const writeTimeout = 10 * time.Second

// monitor is the port monitor: it sends ended jobs to the printer, oldest
// first, one at a time.
func (q *Queue) monitor() {
	defer q.wg.Done()
	for {
		select {
		case <-q.work:
		case <-q.done:
			return
		}
		for {
			j, data := q.nextJob()
			if j == nil {
				break
			}
			q.send(j, data)
		}
	}
}

// nextJob takes the oldest ended job not yet sent.
func (q *Queue) nextJob() (*Job, []byte) {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	for _, j := range q.jobs {
		if j.ended && !j.sent {
			j.sent = true
			j.status |= winspool.JobStatusPrinting
			q.signal()
			return j, j.data
		}
	}
	return nil, nil
}

// send writes a job to the printer and records how it went.
func (q *Queue) send(j *Job, data []byte) {
	dev, err := q.device()
	if err == nil {
		err = write(dev, data)
	}
	var id string
	if err == nil && q.opts.Completion == CompleteOnConfirm {
		id = fmt.Sprintf("%04d", j.ID%10000)
		q.devMu.Lock()
		q.pending[id] = j
		q.devMu.Unlock()
		err = write(dev, escpos.ProcessIDRequest(id))
	}
	if err != nil {
		q.disconnect(dev)
		q.s.mu.Lock()
		j.status = j.status&^winspool.JobStatusPrinting | winspool.JobStatusError
		j.text = "port write failed: " + err.Error()
		q.signal()
		q.s.mu.Unlock()
		return
	}
	if q.opts.Completion == CompleteOnDelivery {
		q.complete(j)
	}
}

func write(dev net.Conn, b []byte) error {
	if err := dev.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	_, err := dev.Write(b)
	return err
}

// complete marks j printed and complete.
func (q *Queue) complete(j *Job) {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	j.status = j.status&^winspool.JobStatusPrinting | winspool.JobStatusPrinted | winspool.JobStatusComplete
	if q.opts.RemoveDone && !j.removed {
		q.remove(j)
	}
	q.signal()
}

// device returns the pipe to the printer, connecting it if need be: the
// printer serves the other end with ServeConn.
func (q *Queue) device() (net.Conn, error) {
	q.devMu.Lock()
	defer q.devMu.Unlock()
	select {
	case <-q.done:
		return nil, errors.New("queue closed")
	default:
	}
	if q.dev != nil {
		return q.dev, nil
	}
	dev, printer := net.Pipe()
	q.dev = dev
	q.wg.Add(2)
	go func() {
		defer q.wg.Done()
		q.sim.ServeConn(printer)
	}()
	go func() {
		defer q.wg.Done()
		q.readAnswers(dev)
	}()
	return dev, nil
}

// disconnect drops a broken pipe; the next job connects a new one.
func (q *Queue) disconnect(dev net.Conn) {
	q.devMu.Lock()
	defer q.devMu.Unlock()
	if dev != nil && q.dev == dev {
		q.dev = nil
		dev.Close()
	}
}

// readAnswers reads the printer's answers to the fake's process ID
// requests and completes their jobs.
func (q *Queue) readAnswers(dev net.Conn) {
	r := bufio.NewReader(dev)
	for {
		id, err := escpos.ReadConfirmation(r)
		if err != nil {
			q.disconnect(dev)
			return
		}
		q.devMu.Lock()
		j := q.pending[id]
		delete(q.pending, id)
		q.devMu.Unlock()
		if j != nil {
			q.complete(j)
		}
	}
}
