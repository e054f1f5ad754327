package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/storeprint/storeprint"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	file := flag.String("file", "orders.jsonl", "file the orders are appended to")
	sync := flag.Bool("sync", true, "fdatasync the file before answering")
	flag.Parse()
	if err := run(*listen, *file, *sync); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

func run(listen, file string, sync bool) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	l := &appender{f: f, sync: sync, reqs: make(chan *write, 4096)}
	go l.run()
	fmt.Printf("listening %s\n", ln.Addr())
	srv := &http.Server{Handler: http.HandlerFunc(l.serve)}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// appender writes orders to the file: whatever waits when a write starts
// goes in one write and one sync.
type appender struct {
	f    *os.File
	sync bool
	reqs chan *write
}

type write struct {
	line []byte
	done chan error
}

func (a *appender) run() {
	var buf []byte
	for w := range a.reqs {
		batch := []*write{w}
	fill:
		for {
			select {
			case w := <-a.reqs:
				batch = append(batch, w)
			default:
				break fill
			}
		}
		buf = buf[:0]
		for _, w := range batch {
			buf = append(buf, w.line...)
		}
		_, err := a.f.Write(buf)
		if err == nil && a.sync {
			err = syncData(a.f)
		}
		for _, w := range batch {
			w.done <- err
		}
	}
}

type taskResult struct {
	TaskNo    string `json:"task_no"`
	Station   string `json:"station"`
	PrinterID string `json:"printer_id"`
	Status    string `json:"status"`
}

func (a *appender) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/orders" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, storeprint.MaxRequestLen))
	if err != nil {
		http.Error(w, `{"error":"read body"}`, http.StatusBadRequest)
		return
	}
	var o storeprint.Order
	if err := json.Unmarshal(body, &o); err != nil {
		http.Error(w, `{"error":"malformed JSON"}`, http.StatusBadRequest)
		return
	}
	done := make(chan error, 1)
	a.reqs <- &write{line: append(body, '\n'), done: done}
	if err := <-done; err != nil {
		http.Error(w, `{"error":"write failed"}`, http.StatusServiceUnavailable)
		return
	}
	res := struct {
		OrderID string       `json:"order_id"`
		Tasks   []taskResult `json:"tasks"`
	}{OrderID: o.OrderID}
	for _, s := range o.Stations() {
		res.Tasks = append(res.Tasks, taskResult{TaskNo: storeprint.TaskNo(o.OrderID, s), Station: s, PrinterID: s, Status: "queued"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(res)
}
