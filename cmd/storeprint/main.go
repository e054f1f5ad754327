// Command storeprint is the operations tool of the storeprint print
// gateway. Its subcommands: reconcile compares a store's tasks with the
// cloud's after an outage and repairs what is safe to repair; printersim
// runs a simulated ESC/POS printer for tests, demos and drills.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	if err := m.ParseFlags(os.Args[1:]); err != nil {
		if errors.Is(err, errHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "storeprint:", err)
		os.Exit(2)
	}
	err := m.Run(ctx)
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	code, report := ExitCode(err)
	if report {
		fmt.Fprintln(os.Stderr, "storeprint:", err)
	}
	os.Exit(code)
}
