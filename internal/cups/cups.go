package cups

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/internal/testlog"
)

// Server is a running cupsd, stopped when the test ends.
type Server struct {
	Dir    string        // ServerRoot: configuration, spool, logs
	Socket string        // the domain socket it listens on
	Exited chan struct{} // closed when cupsd has ended

	cmd *exec.Cmd
	out testlog.Buffer // cupsd's own output (foreground)
}

// Start starts cupsd in the foreground on a domain socket in a new
// temporary directory, listening on no TCP port, and returns once it
// answers. It must run as root, as on CI; a missing cupsd skips the test,
// or fails it in CI (internal/testenv; .ci/run installs Debian's cups).
func Start(t testing.TB) *Server {
	t.Helper()
	cupsd, err := lookPath("cupsd", "/usr/sbin/cupsd")
	if err != nil {
		testenv.Missing(t, "cupsd", err, "apt-get install -y cups")
	}
	// The backends run as user lp: the directory must be theirs to enter.
	dir, err := os.MkdirTemp("", "storeprint-cups-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "cups.sock"), Exited: make(chan struct{})}
	t.Cleanup(func() {
		s.stop()
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("cups: remove %s: %v", dir, err)
		}
	})
	for _, d := range []string{"spool", "tmp", "cache", "state", "log"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := fmt.Sprintf(`ServerRoot %[1]s
RequestRoot %[1]s/spool
TempDir %[1]s/tmp
CacheDir %[1]s/cache
StateDir %[1]s/state
ErrorLog %[1]s/log/error_log
AccessLog %[1]s/log/access_log
PageLog %[1]s/log/page_log
Printcap %[1]s/printcap
SystemGroup root
`, dir)
	// Anyone on the socket may do anything: it lives in a directory of
	// the test's. Changes are written at once (DirtyCleanInterval 0).
	conf := fmt.Sprintf(`Listen %s
LogLevel info
Browsing No
BrowseLocalProtocols none
WebInterface No
DefaultAuthType None
DirtyCleanInterval 0
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order allow,deny
    Allow all
  </Limit>
</Policy>
`, s.Socket)
	if err := os.WriteFile(filepath.Join(dir, "cups-files.conf"), []byte(files), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cupsd.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	s.cmd = exec.Command(cupsd, "-f", "-c", filepath.Join(dir, "cupsd.conf"), "-s", filepath.Join(dir, "cups-files.conf"))
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("cups: start cupsd: %v", err)
	}
	go func() {
		s.cmd.Wait()
		close(s.Exited)
	}()

	// Ready once the socket takes a connection.
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.Dial("unix", s.Socket); err == nil {
			c.Close()
			return s
		}
		select {
		case <-tick.C:
		case <-s.Exited:
			t.Fatalf("cups: cupsd exited at start:\n%s", s.Log())
		case <-deadline.C:
			t.Fatalf("cups: cupsd does not answer on %s:\n%s", s.Socket, s.Log())
		}
	}
}

// Env is the environment a CUPS client (lp, lpadmin, Wine's spooler)
// needs to reach this server.
func (s *Server) Env() []string {
	return []string{"CUPS_SERVER=" + s.Socket}
}

// AddRawQueue adds an enabled raw queue name that sends each job's bytes
// as they are to deviceURI (socket://host:port for a network printer):
//
//	lpadmin -p NAME -E -v URI -m raw
func (s *Server) AddRawQueue(t testing.TB, name, deviceURI string) {
	t.Helper()
	lpadmin, err := lookPath("lpadmin", "/usr/sbin/lpadmin")
	if err != nil {
		t.Fatalf("cups: %v (apt-get install -y cups)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lpadmin, "-p", name, "-E", "-v", deviceURI, "-m", "raw")
	cmd.Env = append(os.Environ(), s.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cups: lpadmin -p %s: %v\n%s\n%s", name, err, out, s.Log())
	}
}

// Log returns cupsd's output and the end of its error log, for failure
// messages.
func (s *Server) Log() string {
	var b strings.Builder
	b.WriteString(s.out.String())
	if el, err := os.ReadFile(filepath.Join(s.Dir, "log", "error_log")); err == nil {
		lines := strings.Split(strings.TrimRight(string(el), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}

// stop ends cupsd: SIGTERM, then SIGKILL if it is still there after a
// while.
func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.Exited
	}
}

// lookPath returns the first of names on PATH, or the first that is a
// path to a program (/usr/sbin is not on every PATH).
func lookPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: %w", names[0], exec.ErrNotFound)
}
