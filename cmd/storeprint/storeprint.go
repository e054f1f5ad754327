package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/storeprint/storeprint/internal/cli"
)

// errHelp is returned by ParseFlags when help was asked for and printed:
// the program exits 0.
var errHelp = cli.ErrHelp

// exitStatus is an error that ends the program with its own exit status.
// With a nil err the output already said everything.
type exitStatus struct {
	code int
	err  error
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitStatus) Unwrap() error { return e.err }

func (e *exitStatus) exitCode() int { return e.code }

// ExitCode returns the exit status for what Run returned: 0 for nil, the
// error's own status where it has one, else 1; and whether the error still
// needs to be printed.
func ExitCode(err error) (code int, report bool) {
	if err == nil {
		return 0, false
	}
	var ec interface{ exitCode() int }
	if errors.As(err, &ec) {
		var es *exitStatus
		silent := errors.As(err, &es) && es.err == nil
		return ec.exitCode(), !silent
	}
	return 1, true
}

// command is one subcommand of storeprint.
type command interface {
	// parseFlags reads the subcommand's arguments (after its name).
	parseFlags(args []string) error
	// run does the work; a server runs until ctx is done.
	run(ctx context.Context) error
	// close releases what run opened; safe to call more than once.
	close() error
}

// commands are the subcommands, in the order --help lists them.
var commands = []struct {
	name    string
	summary string
	new     func(m *Main) command
}{
	{"reconcile", "list (and with --apply repair) tasks that differ between a store and the cloud", newReconcile},
	{"printersim", "run a simulated ESC/POS printer on TCP or a serial line (tests, demos, drills)", newPrinterSim},
	{"version", "print the version", newVersion},
}

func usage() string {
	var b strings.Builder
	b.WriteString("storeprint: operations tool of the storeprint print gateway.\n\nUsage:\n  storeprint <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-12s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'storeprint <command> --help' for a command's flags.\n")
	return b.String()
}

// Main is the storeprint program: ParseFlags picks a subcommand, Run runs
// it, Close releases it.
type Main struct {
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string // the STOREPRINT_* variables

	cmd command
}

// NewMain returns a program writing to the process's stdout and stderr.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// ParseFlags reads the command line: a subcommand name and its flags.
func (m *Main) ParseFlags(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stderr, usage())
		return errors.New("a command is required")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(m.Stdout, usage())
		return errHelp
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands {
		if c.name == args[0] {
			m.cmd = c.new(m)
			return m.cmd.parseFlags(args[1:])
		}
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return fmt.Errorf("unknown command %q (one of %s; see storeprint --help)", args[0], strings.Join(names, ", "))
}

// Run runs the subcommand ParseFlags chose, until it is done or ctx is.
func (m *Main) Run(ctx context.Context) error {
	if m.cmd == nil {
		return errors.New("no command: call ParseFlags first")
	}
	return m.cmd.run(ctx)
}

// Close releases what Run opened.
func (m *Main) Close() error {
	if m.cmd == nil {
		return nil
	}
	return m.cmd.close()
}
