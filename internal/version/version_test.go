package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"Tag", debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"PseudoVersion", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261101120000-0123456789ab+dirty"}}, "v0.0.0-20261101120000-0123456789ab+dirty"},
		{"Revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}, "dev-0123456789ab"},
		{"RevisionDirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "dev-0123456789ab+dirty"},
		{"Nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(&tc.bi); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestString_Stamped(t *testing.T) {
	defer func(s string) { stamped = s }(stamped)
	stamped = "v9.9.9"
	if got := String(); got != "v9.9.9" {
		t.Errorf("got %q, want the stamped v9.9.9", got)
	}
	if got := Line("storeprint"); !strings.HasPrefix(got, "storeprint v9.9.9 (go") {
		t.Errorf("got %q", got)
	}
}
