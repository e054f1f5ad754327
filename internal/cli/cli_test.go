package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// program is a Main that records what run did with it.
type program struct {
	parseErr, runErr, closeErr error
	args                       []string
	ran, closed                bool
}

func (p *program) ParseFlags(args []string) error { p.args = args; return p.parseErr }
func (p *program) Run(ctx context.Context) error  { p.ran = true; return p.runErr }
func (p *program) Close() error                   { p.closed = true; return p.closeErr }

func TestRun(t *testing.T) {
	t.Parallel()
	// setup runs p as "prog" with the arguments "a", "b"; stopped
	// answers 7 and keeps the error it got.
	setup := func(t *testing.T, p *program) (code int, stderr string, stoppedWith error) {
		t.Helper()
		var b strings.Builder
		code = run(context.Background(), "prog", p, []string{"a", "b"}, &b, func(err error) int {
			if stoppedWith != nil {
				t.Fatalf("stopped called twice: %v, then %v", stoppedWith, err)
			}
			stoppedWith = err
			return 7
		})
		if got := strings.Join(p.args, " "); got != "a b" {
			t.Errorf("got ParseFlags(%q), want the arguments a b", got)
		}
		return code, b.String(), stoppedWith
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p := &program{}
		code, stderr, stopped := setup(t, p)
		if code != 0 || stderr != "" || stopped != nil || !p.ran || !p.closed {
			t.Errorf("got status %d, stderr %q, stopped with %v, ran %v, closed %v; want 0, nothing, nil, run and closed", code, stderr, stopped, p.ran, p.closed)
		}
	})
	t.Run("Help", func(t *testing.T) {
		t.Parallel()
		p := &program{parseErr: fmt.Errorf("version: %w", ErrHelp)}
		code, stderr, stopped := setup(t, p)
		if code != 0 || stderr != "" || stopped != nil || p.ran || p.closed {
			t.Errorf("got status %d, stderr %q, stopped with %v, ran %v, closed %v; want 0, nothing, nil, neither run nor closed", code, stderr, stopped, p.ran, p.closed)
		}
	})
	t.Run("ErrFlags", func(t *testing.T) {
		t.Parallel()
		p := &program{parseErr: errors.New("--listen: missing port")}
		code, stderr, stopped := setup(t, p)
		if code != 2 || stderr != "prog: --listen: missing port\n" || stopped != nil || p.ran {
			t.Errorf("got status %d, stderr %q, stopped with %v, ran %v; want 2, the error after the name, nil, not run", code, stderr, stopped, p.ran)
		}
	})
	t.Run("ErrRun", func(t *testing.T) {
		t.Parallel()
		runErr := errors.New("listen: address in use")
		p := &program{runErr: runErr, closeErr: errors.New("close: already closed")}
		code, stderr, stopped := setup(t, p)
		if code != 7 || stderr != "" || stopped != runErr || !p.closed {
			t.Errorf("got status %d, stderr %q, stopped with %v, closed %v; want stopped's 7, nothing, the run error, closed", code, stderr, stopped, p.closed)
		}
	})
	t.Run("ErrClose", func(t *testing.T) {
		t.Parallel()
		closeErr := errors.New("close: flush queue")
		p := &program{closeErr: closeErr}
		code, _, stopped := setup(t, p)
		if code != 7 || stopped != closeErr {
			t.Errorf("got status %d, stopped with %v; want stopped's 7 with the close error", code, stopped)
		}
	})
}

func TestStopped(t *testing.T) {
	t.Parallel()
	stop := errors.New("listen: address in use")
	for _, tt := range []struct {
		format string
		want   func(stderr, log string) bool
	}{
		{"text", func(stderr, log string) bool { return stderr == "prog: listen: address in use\n" && log == "" }},
		{"json", func(stderr, log string) bool {
			var line map[string]any
			return stderr == "" && json.Unmarshal([]byte(log), &line) == nil &&
				line["level"] == "ERROR" && line["msg"] == "prog stopped" && line["err"] == stop.Error()
		}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			var stderr, log strings.Builder
			logger := func() *slog.Logger { return slog.New(slog.NewJSONHandler(&log, nil)) }
			Stopped(&stderr, logger, tt.format, "prog", stop)
			if !tt.want(stderr.String(), log.String()) {
				t.Errorf("got stderr %q and log %q, want the error said once, as the %s format says it", stderr.String(), log.String(), tt.format)
			}
		})
	}
}
