package app

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestSSHProfileRules: an SSH executor profile is the operator's only (a
// config-mode session is refused over MCP), and its config is checked
// whole: a missing or malformed host, user, key file, known_hosts file or
// work root, a port out of range, an unknown setting (a key's contents):
// each VALIDATION_ERROR naming the setting, never the value, with
// nothing written.
func TestSSHProfileRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sshID := dbStr(e, `SELECT id FROM executors WHERE name = 'exec-ssh'`)
	create := func(cfg string) error {
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			t.Fatal(err)
		}
		return e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionExecutorProfileCreate,
			map[string]any{"executor_id": sshID, "name": "host", "config": c}, nil)
	}
	const base = `"host":"build.example","user":"kandev","key_file":"/srv/keys/id_ed25519","known_hosts_file":"/srv/keys/known_hosts","work_root":"/srv/kandev"`
	bad := []struct{ name, cfg, field string }{
		{"no host", `{"user":"u","key_file":"/k","known_hosts_file":"/h","work_root":"/w"}`, "config.host"},
		{"host with an option", `{` + base + `,"host":"-oProxyCommand=evil"}`, "config.host"},
		{"port out of range", `{` + base + `,"port":70000}`, "config.port"},
		{"user with a space", `{` + base + `,"user":"evil user"}`, "config.user"},
		{"relative key file", `{` + base + `,"key_file":"evil/id"}`, "config.key_file"},
		{"unclean known_hosts", `{` + base + `,"known_hosts_file":"/srv/../evil"}`, "config.known_hosts_file"},
		{"work root /", `{` + base + `,"work_root":"/"}`, "config.work_root"},
		{"work root with a quote", `{` + base + `,"work_root":"/srv/evil'x"}`, "config.work_root"},
		{"work root in /etc", `{` + base + `,"work_root":"/etc/evil"}`, "config.work_root"},
		{"a key in the payload", `{` + base + `,"private_key":"-----BEGIN evil"}`, "config"},
		{"workdir not worktree or task", `{` + base + `,"workdir":"/evil"}`, "config.workdir"},
		{"tofu not a boolean", `{` + base + `,"trust_on_first_use":"evil"}`, "config"},
	}
	before := e.counts()
	for _, c := range bad {
		err := create(c.cfg)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != kanban.CodeValidation || !strings.HasPrefix(ke.Message, c.field) || strings.Contains(ke.Message, "evil") {
			t.Errorf("%s: got %v, want VALIDATION_ERROR on %s without the value", c.name, err, c.field)
		}
	}
	if after := e.counts(); !maps.Equal(after, before) {
		t.Fatalf("refused profiles wrote rows: %v → %v", before, after)
	}
	if err := create(`{` + base + `,"port":2222,"trust_on_first_use":true}`); err != nil {
		t.Fatalf("valid SSH profile: %v", err)
	}
	cfgSession := e.sessionMCP(kanban.ModeConfig, "")
	res, err := callErr(cfgSession.Client, "create_executor_profile_kandev", `{"executor_id":"`+sshID+`","name":"mine","config":{}}`)
	if err != nil || !res.IsError || !strings.Contains(text(res), "FORBIDDEN: SSH executor profiles are configured by the operator only") {
		t.Fatalf("config session creating an SSH profile: got %v %s, want FORBIDDEN", err, text(res))
	}
}
