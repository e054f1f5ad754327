package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// stamped is set at build time:
//
//	go build -ldflags "-X github.com/storeprint/storeprint/internal/version.stamped=v1.2.3"
var stamped string

// String returns the program's version, never empty.
func String() string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo is the version Go recorded: the main module's version
// (a tag, or a pseudo-version for an untagged commit, with +dirty for
// uncommitted changes), else the VCS revision, else "dev".
func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if dirty {
		v += "+dirty"
	}
	return v
}

// Line is the one line a program's version command prints, e.g.
// "storeprint-gateway v1.2.0 (go1.26.8 linux/arm64)".
func Line(program string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", program, String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
