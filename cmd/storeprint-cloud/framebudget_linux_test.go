package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testbin"
	"github.com/storeprint/storeprint/sync"
)

var cloudRunningRE = regexp.MustCompile(`msg="cloud running".* listen=(\S+)`)

// runCloudProcess runs the real storeprint-cloud program on dbURL and
// returns its base URL and process id once it serves.
func runCloudProcess(t *testing.T, dbURL string) (base string, pid int) {
	t.Helper()
	bin := testbin.Build(t, "github.com/storeprint/storeprint/cmd/storeprint-cloud")
	cmd := exec.Command(bin, "run", "--listen", "127.0.0.1:0", "--admin-token", adminToken, "--database-url", dbURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu stdsync.Mutex
	var log strings.Builder
	addr := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := cloudRunningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if f := os.Getenv("FLOOD_CLOUD_LOG"); f != "" {
			mu.Lock()
			_ = os.WriteFile(f, []byte(log.String()), 0o644)
			mu.Unlock()
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("cloud log:\n%s", log.String())
			mu.Unlock()
		}
	})
	select {
	case base = <-addr:
	case <-exited:
		t.Fatal("the cloud ended at start")
	}
	apis.Add(base, cloudAPI)
	return base, cmd.Process.Pid
}

// peakRSS is a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// Thirty links opened at once, each sending one 15 MiB status frame:
// the real cloud process reads no frame past its read budget, so its
// peak RSS stays under 256 MiB, at most one link stays live, and another
// store's order reaches the cloud meanwhile (how soon is logged, with the
// same without the flood: a figure, not a test of speed). Once with a credential per
// link (the budget alone bounds them), once with one credential for all
// (one live link per credential as well).
func TestChain_FrameFlood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"CredentialEach", false}, {"OneCredential", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL := pgtest.NewDatabase(t)
			base, pid := runCloudProcess(t, dbURL)
			flood := createStore(t, base, "t-flood", "s-flood")
			creds := []store{flood}
			for len(creds) < 30 {
				if tc.shared {
					creds = append(creds, flood)
					continue
				}
				var gw struct {
					GatewayID string `json:"gateway_id"`
					Token     string `json:"token"`
				}
				if code := do(t, adminToken, "POST", base+"/v1/admin/stores/"+flood.id+"/gateways", map[string]string{"reason": "test"}, &gw); code != 201 {
					t.Fatalf("create gateway: %d", code)
				}
				creds = append(creds, store{id: flood.id, gatewayID: gw.GatewayID, token: gw.Token})
			}
			other := createStore(t, base, "t-other", "s-other")
			_, sim := startSim(t)
			g := startGateway(t, other, strings.TrimPrefix(base, "http://"), map[string]string{"hot-1": sim})
			waitSynced(t, g, 30*time.Second)
			ctx := context.Background()
			db, err := pgx.Connect(ctx, dbURL) // the database, not the cloud: the cloud's API may be busy
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close(ctx)
			reach := func(order string) time.Duration {
				t.Helper()
				at := time.Now()
				if code := postOrder(t, g.base, order, "hot"); code != 201 {
					t.Fatalf("order: %d", code)
				}
				var reached time.Duration
				// Read from the database: the order reached the cloud once
				// stored, however busy the cloud's API is.
				waitGateway(t, g, 30*time.Second, func() (bool, string) {
					var n int
					if err := db.QueryRow(ctx, `SELECT count(*) FROM print_tasks WHERE store_id = $1 AND task_no = $2`,
						other.id, "order_"+order+"_station_hot").Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n == 1 && reached == 0 {
						reached = time.Since(at)
					}
					return n == 1, "the other store's task is not in the cloud"
				})
				return reached
			}
			quiet := reach("quiet")

			// The frame: printers enough for 15 MiB.
			big := &sync.Frame{Type: sync.FrameStatus}
			for i := 0; ; i++ {
				big.Printers = append(big.Printers, sync.PrinterStatus{ID: fmt.Sprintf("printer-%07d", i), Status: "ready",
					Stations: []string{"hot", "cold", "bar", "grill"}, Backup: "printer-backup-0000001", At: time.Unix(0, 0).UTC()})
				if i%1000 == 0 {
					if b, _ := sync.Encode(big); len(b) >= 15<<20 {
						break
					}
				}
			}
			frame, err := sync.Encode(big)
			if err != nil {
				t.Fatal(err)
			}
			big = nil

			url := "ws" + strings.TrimPrefix(base, "http") + sync.Path
			go0 := make(chan struct{})
			outcomes := make(chan string, len(creds))
			var wg stdsync.WaitGroup
			for _, c := range creds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outcomes <- floodLink(url, c, frame, go0)
				}()
			}
			close(go0)
			reached := reach("flood")
			wg.Wait()
			close(outcomes)
			live := 0
			var said []string
			for o := range outcomes {
				if o == "live" {
					live++
				}
				said = append(said, o)
			}
			rss := peakRSS(t, pid)
			t.Logf("%d links, %d MiB frames: %d live; cloud peak RSS %d MiB; the other store's order reached the cloud in %s (%s without the flood)",
				len(creds), len(frame)>>20, live, rss>>20, reached.Round(time.Millisecond), quiet.Round(time.Millisecond))
			if live > 1 {
				t.Errorf("got %d links live after their 15 MiB frames, want at most 1: %q", live, said)
			}
			if rss >= 256<<20 {
				t.Errorf("cloud peak RSS %d MiB, want under 256 MiB", rss>>20)
			}
		})
	}
}

// floodLink opens a link, waits for go0, sends frame and a ping, and
// says what became of it: "live" once the pong came (the frame was read
// and the link kept), or why it closed.
func floodLink(url string, c store, frame []byte, go0 <-chan struct{}) string {
	h := http.Header{"Authorization": {"Bearer " + c.token}, sync.HeaderGateway: {c.gatewayID}}
	conn, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	hello, _ := sync.Encode(&sync.Frame{Type: sync.FrameHello, GatewayID: c.gatewayID, StoreID: c.id})
	if err := conn.WriteMessage(websocket.TextMessage, hello); err != nil {
		return "hello: " + err.Error()
	}
	pong := make(chan struct{}, 1)
	conn.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
	read := make(chan string, 1)
	go func() {
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					read <- fmt.Sprintf("closed %d", ce.Code)
				} else {
					read <- "closed: " + err.Error()
				}
				return
			}
			if f, err := sync.Decode(b); err == nil && f.Type == sync.FrameError {
				read <- "error frame: " + f.Code
				return
			}
		}
	}()
	<-go0
	if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		return "write: " + err.Error()
	}
	if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Minute)); err != nil {
		return "ping: " + err.Error()
	}
	select {
	case <-pong:
		return "live"
	case why := <-read:
		return why
	}
}
