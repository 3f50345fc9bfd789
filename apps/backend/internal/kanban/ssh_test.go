package kanban

import (
	"encoding/json"
	"testing"
)

// TestParseSSHConfig: defaults (port 22, workdir worktree), the address
// of names, IPv4 and IPv6 hosts, and refusals that name the setting only.
func TestParseSSHConfig(t *testing.T) {
	parse := func(raw string) (*SSHConfig, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		return ParseSSHConfig(m)
	}
	const rest = `"user":"k","key_file":"/k/id","known_hosts_file":"/k/known_hosts","work_root":"/srv/w"`
	for _, tc := range []struct{ host, addr string }{
		{"build.example", "build.example:22"}, {"10.0.0.7", "10.0.0.7:22"}, {"::1", "[::1]:22"}, {"[fe80::1]", "[fe80::1]:22"},
	} {
		c, err := parse(`{"host":"` + tc.host + `",` + rest + `}`)
		if err != nil || c.Addr() != tc.addr || c.Workdir != "worktree" || c.TrustOnFirstUse {
			t.Fatalf("host %s: got %+v %v, want address %s and the defaults", tc.host, c, err, tc.addr)
		}
	}
	for _, tc := range []struct{ raw, field string }{
		{`{"host":"a b",` + rest + `}`, "config.host"},
		{`{"host":"h","port":-1,` + rest + `}`, "config.port"},
		{`{"host":"h",` + rest + `,"known_hosts_file":"/k/id"}`, "config.known_hosts_file"},
		{`{"host":"h",` + rest + `,"work_root":"/srv/w/../x"}`, "config.work_root"},
		{`{"host":"h",` + rest + `,"work_root":"/usr/local/x"}`, "config.work_root"},
		{`{"host":"h",` + rest + `,"key_file":"/k/id\n"}`, "config.key_file"},
	} {
		_, err := parse(tc.raw)
		if e, ok := AsError(err); !ok || e.Code != CodeValidation || e.Field != tc.field {
			t.Errorf("%s: got %v, want VALIDATION_ERROR on %s", tc.raw, err, tc.field)
		}
	}
}
