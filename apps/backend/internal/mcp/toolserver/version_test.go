package toolserver

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	mod := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/kandev/kandev/apps/backend", Version: v}}
	}
	for _, c := range []struct {
		name, set string
		bi        *debug.BuildInfo
		ok        bool
		want      string
	}{
		{"ldflags win over build info", "v2.0.0", mod("v1.0.0"), true, "v2.0.0"},
		{"go install records the module version", "dev", mod("v1.2.3"), true, "v1.2.3"},
		{"pseudo-version", "dev", mod("v0.0.0-20261202120000-abcdef123456"), true, "v0.0.0-20261202120000-abcdef123456"},
		{"a checkout's build says (devel)", "dev", mod("(devel)"), true, "dev"},
		{"no version", "dev", mod(""), true, "dev"},
		{"no build info", "dev", nil, false, "dev"},
	} {
		if got := versionOf(c.set, c.bi, c.ok); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
