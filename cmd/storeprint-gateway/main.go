// Command storeprint-gateway is the store's print gateway: it takes orders
// from the POS, keeps them in a durable local queue and prints them on the
// kitchen's printers, confirmed by the printers themselves.
package main

import (
	"os"

	"github.com/storeprint/storeprint/internal/cli"
)

func main() {
	m := NewMain()
	os.Exit(cli.Run("storeprint-gateway", m, func(err error) int {
		m.Stopped(err)
		return ExitCode(err)
	}))
}
