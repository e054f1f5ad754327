package main

import (
	"context"
	"fmt"

	"github.com/storeprint/storeprint/internal/version"
)

const versionUsage = `Usage: storeprint version

Prints the program's version, the Go version it was built with and its
platform. Also: storeprint --version.
`

// versionCmd is storeprint version.
type versionCmd struct{ m *Main }

func newVersion(m *Main) command { return &versionCmd{m: m} }

func (c *versionCmd) parseFlags(args []string) error {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(c.m.Stdout, versionUsage)
			return errHelp
		}
	}
	if len(args) > 0 {
		return fmt.Errorf("version: unexpected argument %q", args[0])
	}
	return nil
}

func (c *versionCmd) run(context.Context) error {
	fmt.Fprintln(c.m.Stdout, version.Line("storeprint"))
	return nil
}

func (c *versionCmd) close() error { return nil }
