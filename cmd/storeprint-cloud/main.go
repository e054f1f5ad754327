package main

import (
	"os"

	"github.com/storeprint/storeprint/internal/cli"
)

func main() {
	m := NewMain()
	os.Exit(cli.Run("storeprint-cloud", m, func(err error) int {
		m.Stopped(err)
		return 1
	}))
}
