package pgtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/internal/testenv"
	"github.com/storeprint/storeprint/schema"
)

// EnvURL names the variable holding the URL of a PostgreSQL server for
// tests, as a superuser or a role that may create databases.
const EnvURL = "STOREPRINT_TEST_DATABASE_URL"

var (
	skip     string        // why there is no server, when the tests skip for it
	server   *url.URL      // the server, database "postgres" (or as given)
	admin    *pgxpool.Pool // creates and drops test databases
	template string        // the migrated template database
)

// Main starts or finds the server, migrates the template database, runs
// the tests, then the cleanups, and stops what it started. It exits the
// process. Under -short it starts nothing, and every test that asks for
// a database skips: the fast inner loop leaves PostgreSQL out. If no
// server can be had, the tests that ask for one skip, saying why, or, in
// CI (internal/testenv), they all fail with a message that says why.
func Main(m *testing.M, cleanups ...func()) {
	code := run(m)
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse() // testing.Short, before m.Run parses the flags
	}
	if testing.Short() {
		skip = "needs PostgreSQL: -short leaves it out (go test without -short, or make test, runs it)"
		return m.Run()
	}
	stop, err := setup()
	if err != nil && testenv.MaySkip() {
		skip = fmt.Sprintf("pgtest: no PostgreSQL (%v): skipped; to run the tests that need it: apt-get install -y postgresql, or set %s", err, EnvURL)
		return m.Run()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: no PostgreSQL for the tests: %v\n", err)
		fmt.Fprintf(os.Stderr, "pgtest: install PostgreSQL (apt-get install -y postgresql) or set %s; in CI (CI=true) a missing program fails its tests\n", EnvURL)
		return 1
	}
	code := m.Run()
	stop()
	return code
}

func setup() (stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stopServer := func() {}
	if s := os.Getenv(EnvURL); s != "" {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("%s must be a postgres:// URL", EnvURL)
		}
		server = u
	} else {
		u, stop, err := startCluster()
		if err != nil {
			return nil, err
		}
		server, stopServer = u, stop
	}
	admin, err = pgxpool.New(ctx, server.String())
	if err != nil {
		stopServer()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		stopServer()
		return nil, fmt.Errorf("connect to %s: %w", redacted(server), err)
	}
	template = "storeprint_tmpl_" + randomHex(6)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+template); err != nil {
		admin.Close()
		stopServer()
		return nil, fmt.Errorf("create template database: %w", err)
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+template+" WITH (FORCE)")
		admin.Close()
		stopServer()
	}
	if _, err := schema.Up(ctx, databaseURL(template)); err != nil {
		stop()
		return nil, fmt.Errorf("migrate template database: %w", err)
	}
	return stop, nil
}

// NewDatabase returns the URL of a new database with the schema applied,
// dropped when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, template)
}

// NewEmptyDatabase returns the URL of a new database without the schema,
// dropped when the test ends.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "template0")
}

func newDatabase(t testing.TB, from string) string {
	t.Helper()
	if skip != "" {
		t.Skip(skip)
	}
	if admin == nil {
		t.Fatal("pgtest: no server: call pgtest.Main from TestMain")
	}
	name := "storeprint_test_" + randomHex(8)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+from); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return databaseURL(name)
}

// databaseURL is the server's URL with another database.
func databaseURL(name string) string {
	u := *server
	u.Path = "/" + name
	return u.String()
}

// startCluster runs initdb and pg_ctl start in a temporary directory.
func startCluster() (*url.URL, func(), error) {
	bin, err := findBin()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "storeprint-pgtest-")
	if err != nil {
		return nil, nil, err
	}
	// run uses its own deadline: stop runs after ctx has ended.
	run := func(name string, args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return exec.CommandContext(ctx, filepath.Join(bin, name), args...).CombinedOutput()
	}
	if os.Geteuid() == 0 {
		// initdb refuses root: run the cluster as the postgres user.
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, errors.New("running as root and there is no postgres user to run the cluster as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, errors.New("running as root and runuser is missing")
		}
		run = func(name string, args ...string) ([]byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args = append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)
			return exec.CommandContext(ctx, runuser, args...).CombinedOutput()
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	stop := func() {
		if out, err := run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
			// Keep the directory: the server may still be running from it.
			fmt.Fprintf(os.Stderr, "pgtest: stop the test cluster in %s: %v: %s\n", dir, err, out)
			return
		}
		os.RemoveAll(dir)
	}
	var lastErr error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			stop()
			return nil, nil, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "+
			"-c full_page_writes=off -c max_connections=500", port, dir)
		out, err := run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts, "-w", "-t", "60", "start")
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			lastErr = fmt.Errorf("pg_ctl start: %v: %s%s", err, out, log)
			continue
		}
		watch(bin, data, dir)
		u := &url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Path: "/postgres", RawQuery: "sslmode=disable"}
		return u, stop, nil
	}
	stop()
	return nil, nil, lastErr
}

// watch starts a watchdog that stops the cluster and removes its directory
// once this process is gone, should it die without running stop (a panic,
// a test timeout).
func watch(bin, data, dir string) {
	stop := filepath.Join(bin, "pg_ctl") + " -D " + data + " -m immediate -w stop"
	if os.Geteuid() == 0 {
		stop = "runuser -u postgres -- " + stop
	}
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s", os.Getpid(), stop, dir)
	cmd := exec.Command("sh", "-c", script)
	detach(cmd) // survives a signal to this process's group (Ctrl-C, go test's timeout)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: no watchdog for the test cluster: %v\n", err)
		return
	}
	go cmd.Wait() // reap it should this process outlive it
}

// findBin returns the directory holding initdb and pg_ctl.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest version first: "9" < "15" as numbers, not as strings.
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb and pg_ctl not found in PATH or /usr/lib/postgresql/*/bin")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string { return storeprint.RandomHex(n) }

// redacted is u without its password, for messages.
func redacted(u *url.URL) string {
	return strings.Replace(u.Redacted(), "xxxxx", "***", 1)
}

// Tool returns the path of a PostgreSQL program (pg_dump, pg_restore)
// from the installation whose initdb the tests use, so that it matches the
// server's version.
func Tool(name string) (string, error) {
	bin, err := findBin()
	if err != nil {
		return "", err
	}
	dirs := []string{bin}
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "initdb")); err == nil {
		dirs = append(dirs, filepath.Dir(real)) // initdb linked into PATH from its installation
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not beside initdb in %s", name, strings.Join(dirs, " or "))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
