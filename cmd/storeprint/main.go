// Command storeprint is the operations tool of the storeprint print
// gateway. Its subcommands: reconcile compares a store's tasks with the
// cloud's after an outage and repairs what is safe to repair; printersim
// runs a simulated ESC/POS printer for tests, demos and drills.
package main

import (
	"fmt"
	"os"

	"github.com/storeprint/storeprint/internal/cli"
)

func main() {
	os.Exit(cli.Run("storeprint", NewMain(), func(err error) int {
		code, report := ExitCode(err)
		if report {
			fmt.Fprintln(os.Stderr, "storeprint:", err)
		}
		return code
	}))
}
