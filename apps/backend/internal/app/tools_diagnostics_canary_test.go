package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestDiagnosticBundleRedaction puts a canary secret everywhere a secret
// can live (the operator token, a session token, an agent environment
// variable passed with --agent-env, an MCP server's URL, headers, args and
// environment, log lines with a bearer header, the task's prompt, the
// agent's stderr), has a real agent call get_diagnostic_bundle_kandev
// through its own kandev mcp, and checks that the unzipped bundle holds
// none of them while still saying where each one was.
// Not parallel: it sets an environment variable the agent inherits.
func TestDiagnosticBundleRedaction(t *testing.T) {
	canaries := map[string]string{}
	canary := func(kind string) string {
		c := kind + "-canary-" + kanban.NewID()[:8]
		canaries[kind] = c
		return c
	}
	opToken, envSecret, agentBearer := canary("operator"), canary("agentenv"), canary("agentbearer")
	t.Setenv("DIAG_CANARY_SECRET", envSecret)
	bin := kandevBinary(t)
	script := `echo "agent stderr: env $DIAG_CANARY_SECRET; Authorization: Bearer ` + agentBearer + `" >&2; exec "$0" agent mock`
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": "sh", "args": []string{"-c", script, bin}}}),
		func(c *Config) { c.Token, c.Agents.EnvAllow = opToken, AgentEnvAllow("DIAG_CANARY_SECRET") })

	vaultValue := setCanarySecret(t, e, canary("vault"))
	prof := e.profileOf("mock-agent")
	off := false
	e.dispatch(kanban.ActionMCPConfigUpdate, action.MCPConfigUpdateIn{AgentProfileID: prof.ID, Enabled: &off, Servers: map[string]kanban.MCPServerConfig{
		"remote": {Type: "http", URL: "https://user:" + canary("urluser") + "@mcp.example.com/mcp?key=" + canary("urlquery"),
			Headers: map[string]string{"X-Api-Key": canary("header"), "X-Team": canary("plainheader")}},
		"local": {Type: "stdio", Command: "/usr/bin/env", Args: []string{"--token", canary("arg"), "--dsn", "postgres://app:" + canary("argurl") + "@db:5432/x", "--mode=plain"},
			Env: map[string]string{"UPSTREAM_SETTING": canary("mcpenv"), "UPSTREAM_CRED": kanban.SecretPrefix + "UPSTREAM_CRED"}},
	}}, nil)
	other := e.newTask("Other")
	var hand action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: other.ID}, &hand)
	canaries["session token"] = hand.Token
	e.b.log.Info("connected with " + hand.Token)
	e.b.log.Info("operator uses " + opToken)
	e.b.log.Info("upstream request", "header", "Authorization: Bearer "+canary("logbearer"))

	// The server's own paths: an agent learns none from its bundle.
	dataDir, _ := filepath.Abs(e.cfg.DataDir)
	canaries["data dir path"] = dataDir
	ws := t.TempDir()
	prompt := "Prompt canary: " + canary("prompt") + "\n@tool get_diagnostic_bundle_kandev {\"source\":\"all\"}\n@say done"
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Diagnose " + canary("title"), "prompt": prompt,
		"agent_profile_id": prof.ID, "local_path": ws}, &created)
	tc := e.waitMessage(created.Task.ID, "tool_call", "get_diagnostic_bundle_kandev")
	// The agent's own session token, from its token file (the session is live).
	own, err := os.ReadFile(filepath.Join(e.cfg.DataDir, agent.TokenDir, created.SessionID))
	if err != nil || len(strings.TrimSpace(string(own))) < 32 {
		t.Fatalf("the agent's token file: %v", err)
	}
	canaries["the agent's own session token"] = strings.TrimSpace(string(own))
	for !strings.Contains(tc.Content, `"status":"completed"`) && !strings.Contains(tc.Content, `"status":"failed"`) {
		tc = e.waitMessage(created.Task.ID, "tool_call", `"status":"`)
	}
	var call struct{ Status, Output string }
	var out action.DiagnosticBundleOut
	if err := json.Unmarshal([]byte(tc.Content), &call); err != nil || call.Status != "completed" || json.Unmarshal([]byte(call.Output), &out) != nil {
		t.Fatalf("got tool call %s (%v), want a completed bundle", tc.Content, err)
	}
	files, _ := readBundle(t, filepath.Join(ws, filepath.FromSlash(out.Path)))
	checkBundleRedacted(t, files, tc.Content, canaries, created.SessionID)
	if strings.Contains(e.logs.String(), vaultValue) {
		t.Error("the backend's log holds the named secret's value")
	}
}

// checkBundleRedacted checks that the bundle's files and the tool call's
// record (toolCall) hold no canary, while the files still say where each
// secret was (session sessionID's stderr, the log, the config).
func checkBundleRedacted(t *testing.T, files map[string][]byte, toolCall string, canaries map[string]string, sessionID string) {
	t.Helper()
	var all bytes.Buffer
	for name, b := range files {
		all.WriteString(name + "\n")
		all.Write(b)
	}
	all.WriteString(toolCall)
	for kind, c := range canaries {
		if strings.Contains(all.String(), c) {
			t.Errorf("the bundle (or the tool's result) holds the %s canary", kind)
		}
	}
	for name, want := range map[string][]string{
		"backend/agent-stderr.txt": {"agent stderr: env [redacted]; Authorization: [redacted]", "== agent stderr of session " + sessionID},
		"backend/log.txt":          {"connected with [redacted]", "operator uses [redacted]", `Authorization: [redacted]`, "the vault holds [redacted]"},
		"backend/config.json": {`"DIAG_CANARY_SECRET"`, `"X-Api-Key"`, `"UPSTREAM_SETTING"`, `"https://mcp.example.com/mcp"`,
			`"--token",`, `"postgres://app:[redacted]@db:5432/x"`, `"--mode=plain"`},
		"backend/task.json": {sessionID},
	} {
		for _, w := range want {
			if !strings.Contains(string(files[name]), w) {
				t.Errorf("%s: does not contain %q; got:\n%s", name, w, files[name])
			}
		}
	}
}

// setCanarySecret stores value as the named secret UPSTREAM_CRED and logs
// it: it is redacted by value only (nothing in its shape says it is a
// secret). The test refers to it from a profile's MCP server environment.
func setCanarySecret(t *testing.T, e *env, value string) string {
	t.Helper()
	var setOut kanban.SecretInfo
	e.dispatch(kanban.ActionSecretSet, action.SecretSetIn{Name: "UPSTREAM_CRED", Value: value}, &setOut)
	if b, _ := json.Marshal(setOut); strings.Contains(string(b), value) {
		t.Fatalf("secret.set answered its value: %s", b)
	}
	e.b.log.Info("the vault holds " + value)
	return value
}
