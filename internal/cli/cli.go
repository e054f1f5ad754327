package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// ErrHelp is what ParseFlags returns when help was asked for and printed:
// the program exits 0.
var ErrHelp = errors.New("help requested")

// Main is what a command's Main type provides.
type Main interface {
	// ParseFlags reads the arguments after the program's name.
	ParseFlags(args []string) error
	// Run does the work; a server runs until ctx is done.
	Run(ctx context.Context) error
	// Close releases what Run opened.
	Close() error
}

// Run runs p with the process's arguments until it ends or the process
// gets SIGINT or SIGTERM, and returns the exit status for os.Exit.
//
// Flags that do not parse are said on stderr after the program's name and
// end it with status 2; help ends it with 0. An error from Run, else from
// Close, goes to stopped, which reports it and returns the status.
func Run(name string, p Main, stopped func(err error) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, name, p, os.Args[1:], os.Stderr, stopped)
}

// Stopped reports err, the error program stops with, on stderr: on a line
// of its own, or, in the log format "json", on the log that logger
// returns, as a JSON log line like every other, so that a log collector
// reads the last line too.
func Stopped(stderr io.Writer, logger func() *slog.Logger, format, program string, err error) {
	if format == "json" {
		logger().Error(program+" stopped", "err", err)
		return
	}
	fmt.Fprintln(stderr, program+":", err)
}

func run(ctx context.Context, name string, p Main, args []string, stderr io.Writer, stopped func(error) int) int {
	if err := p.ParseFlags(args); err != nil {
		if errors.Is(err, ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	err := p.Run(ctx)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stopped(err)
	}
	return 0
}
