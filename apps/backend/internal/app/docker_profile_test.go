package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestDockerProfileRules: a Docker executor profile is the operator's
// only (a config-mode session is refused over MCP), and its config is
// checked whole: a missing image, a network other than host or none, an
// unknown setting (privileged), a mount source outside the source roots,
// the daemon socket's directory or a mount target under /kandev or a
// system directory, an env name Docker or Kandev reads, bounds: each
// VALIDATION_ERROR naming the setting, never the value, with nothing
// written. Other executors' configs stay open.
func TestDockerProfileRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dockerID := dbStr(e, `SELECT id FROM executors WHERE name = 'exec-docker'`)
	src := t.TempDir()
	create := func(cfg string) error {
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			t.Fatal(err)
		}
		return e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionExecutorProfileCreate,
			map[string]any{"executor_id": dockerID, "name": "box", "config": c}, nil)
	}
	before := e.counts()
	refuseDockerConfigs(t, create, src)
	if after := e.counts(); !maps.Equal(after, before) {
		t.Fatalf("refused profiles wrote rows: %v → %v", before, after)
	}
	ok := fmt.Sprintf(`{"image":"kandev-test/busybox:1","network":"none","cpus":0.5,"memory_mb":64,"env":{"A":"b"},"pass_env":["ANTHROPIC_API_KEY"],"mounts":[{"source":%q,"target":"/data","read_only":true}]}`, src)
	if err := create(ok); err != nil {
		t.Fatalf("valid Docker profile: %v", err)
	}
	var prof kanban.List[kanban.ExecutorProfile]
	e.dispatch(kanban.ActionExecutorProfileList, map[string]any{"executor_id": dockerID}, &prof)
	if len(prof.Items) != 1 {
		t.Fatalf("got %d Docker profiles, want 1", len(prof.Items))
	}
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionExecutorProfileUpdate,
		map[string]any{"profile_id": prof.Items[0].ID, "config": map[string]any{"image": "x", "network": "bridge"}}, nil)
	if kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("update to a bridge network: got %v, want VALIDATION_ERROR", err)
	}

	cfgSession := e.sessionMCP(kanban.ModeConfig, "")
	res, err := callErr(cfgSession.Client, "create_executor_profile_kandev",
		fmt.Sprintf(`{"executor_id":%q,"name":"mine","config":{"image":"x"}}`, dockerID))
	if err != nil || !res.IsError || !strings.Contains(text(res), "FORBIDDEN: Docker executor profiles are configured by the operator only") {
		t.Fatalf("config session creating a Docker profile: got %v %s, want FORBIDDEN", err, text(res))
	}
	local := dbStr(e, `SELECT id FROM executors WHERE name = 'exec-local'`)
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionExecutorProfileCreate,
		map[string]any{"executor_id": local, "name": "open", "config": map[string]any{"network": "bridge", "anything": 1}}, nil); err != nil {
		t.Fatalf("exec-local's open config: %v", err)
	}
}

// refuseDockerConfigs checks that create refuses each bad Docker config
// with a VALIDATION_ERROR on its setting, without the value.
func refuseDockerConfigs(t *testing.T, create func(string) error, src string) {
	t.Helper()
	bad := []struct{ name, cfg, field string }{
		{"no image", `{"network":"host"}`, "config.image"},
		{"image with a space", `{"image":"a b"}`, "config.image"},
		{"bridge network", `{"image":"x","network":"bridge"}`, "config.network"},
		{"unknown setting", `{"image":"x","privileged":true}`, "config"},
		{"mount outside the roots", `{"image":"x","mounts":[{"source":"/","target":"/src"}]}`, "config.mounts[0].source"},
		{"daemon socket dir", `{"image":"x","mounts":[{"source":"/var/run","target":"/s"}]}`, "config.mounts[0].source"},
		{"target under /kandev", fmt.Sprintf(`{"image":"x","mounts":[{"source":%q,"target":"/kandev/bin"}]}`, src), "config.mounts"},
		{"target /etc", fmt.Sprintf(`{"image":"x","mounts":[{"source":%q,"target":"/etc"}]}`, src), "config.mounts"},
		{"relative target", fmt.Sprintf(`{"image":"x","mounts":[{"source":%q,"target":"src"}]}`, src), "config.mounts"},
		{"DOCKER_ env", `{"image":"x","env":{"DOCKER_HOST":"tcp://evil"}}`, "config.env"},
		{"KANDEV_ pass_env", `{"image":"x","pass_env":["KANDEV_TOKEN"]}`, "config.pass_env"},
		{"memory too small", `{"image":"x","memory_mb":1}`, "config.memory_mb"},
		{"negative cpus", `{"image":"x","cpus":-1}`, "config.cpus"},
		{"workdir", `{"image":"x","workdir":"/"}`, "config.workdir"},
	}
	for _, c := range bad {
		err := create(c.cfg)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != kanban.CodeValidation || !strings.HasPrefix(ke.Message, c.field) ||
			strings.Contains(ke.Message, "evil") || strings.Contains(ke.Message, src) {
			t.Errorf("%s: got %v, want VALIDATION_ERROR on %s without the value", c.name, err, c.field)
		}
	}
}
