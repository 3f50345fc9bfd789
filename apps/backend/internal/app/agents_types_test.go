package app

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// detectAll pages through agent.detect (refresh on the first page).
func (e *env) detectAll(refresh bool) map[string]kanban.AgentDetection {
	e.t.Helper()
	out := map[string]kanban.AgentDetection{}
	in := map[string]any{"refresh": refresh, "limit": 7}
	for {
		var page kanban.List[kanban.AgentDetection]
		e.dispatch(kanban.ActionAgentDetect, in, &page)
		for _, d := range page.Items {
			out[d.Name] = d
		}
		if page.NextCursor == "" {
			return out
		}
		in = map[string]any{"cursor": page.NextCursor, "limit": 7}
	}
}

// customAgents is an agents file with two custom agent types: the mock
// agent under another name, with a server-side variable, and one whose
// command is installed nowhere.
func customAgents(t *testing.T) func(*Config) {
	bin := kandevBinary(t)
	return withAgentCommands(t, map[string]any{
		"my-mock": map[string]any{"display_name": "My Mock", "command": bin, "args": []string{"agent", "mock"},
			"env": map[string]string{"MY_AGENT_VAR": "server-side-value-42"}},
		"ghost": map[string]any{"command": "ghost-acp-not-installed", "install": "pipx install ghost-acp"},
	})
}

// Every agent type is detected: with a PATH holding none of them, each
// built-in one but the mock agent is not installed (and says how to
// install it), the mock agent and the custom one made of it are, with the
// version their ACP initialize answered; a session's offered models and
// modes are recorded.
func TestAgentDetectEveryType(t *testing.T) {
	files := customAgents(t) // builds kandev while go is on PATH
	t.Setenv("PATH", t.TempDir())
	e := newAgentEnv(t, files)
	got := e.detectAll(true)
	types, err := agent.LoadTypes("")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(types)+2 {
		t.Fatalf("detected %d types, want %d", len(got), len(types)+2)
	}
	for _, ty := range types {
		d := got[ty.Name]
		if d.Install == "" || d.DisplayName == "" || d.CheckedAt == nil {
			t.Fatalf("%s: %+v", ty.Name, d)
		}
		if ty.Name == "mock-agent" {
			if d.Status != kanban.AgentInstalled || d.Version != "1" || d.Method != agent.DetectSelf {
				t.Fatalf("mock agent: %+v", d)
			}
			continue
		}
		if d.Status != kanban.AgentNotInstalled || !strings.Contains(d.Detail, "not found on PATH") {
			t.Fatalf("%s without anything on PATH: %+v", ty.Name, d)
		}
	}
	if d := got["my-mock"]; d.Status != kanban.AgentInstalled || d.Version != "1" || !d.Custom || d.DisplayName != "My Mock" {
		t.Fatalf("custom mock: %+v", d)
	}
	if d := got["ghost"]; d.Status != kanban.AgentNotInstalled || d.Install != "pipx install ghost-acp" {
		t.Fatalf("ghost: %+v", d)
	}
	// The refusals: a bad cursor; a session may not probe.
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionAgentDetect, map[string]any{"cursor": "nope"}, nil); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("bad cursor: %v", err)
	}
	if err := e.tryDispatch(action.Principal{Kind: action.Session, SessionID: "x", WorkspaceID: e.workspaceID()}, kanban.ActionAgentDetect, map[string]any{}, nil); err == nil {
		t.Fatal("a session ran agent.detect")
	}
}

// A custom agent type from the agents file has its agents row and
// default profile, launches with its server-side variables (never shown),
// and a type whose command is not installed fails its launch naming the
// install command.
func TestCustomAgentTypeLaunches(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t, customAgents(t))
	prof := e.profileOf("my-mock")
	task, sid := e.startMock("custom", "@sh test \"$MY_AGENT_VAR\" = server-side-value-42 && echo env-reached\n@say done", map[string]any{"agent_profile_id": prof.ID})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "done")
	if !strings.Contains(dumpConversation(e.conversation(task.ID)), "env-reached") {
		t.Fatalf("the custom type's variable did not reach its agent: %s", dumpConversation(e.conversation(task.ID)))
	}
	_, sid = e.startMock("ghost", "@say hi", map[string]any{"agent_profile_id": e.profileOf("ghost").ID})
	s := e.waitState(sid, kanban.SessionFailed)
	if !strings.Contains(s.Error, "agent type ghost is not installed") || !strings.Contains(s.Error, "pipx install ghost-acp") {
		t.Fatalf("error %q", s.Error)
	}
}

// A profile's model is selected over ACP when the agent offers it (the
// mock agent offers mock-fast and mock-smart); one it does not offer
// fails the launch, naming what it offers and not the profile's value.
func TestProfileModelSelection(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	mock := e.profileOf("mock-agent")
	var smart kanban.AgentProfile
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": mock.AgentID, "name": "smart", "model": "mock-smart"}, &smart)
	task, sid := e.startMock("smart", "@model", map[string]any{"agent_profile_id": smart.ID})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "model: mock-smart")
	d := e.detectAll(false)["mock-agent"]
	if len(d.Models) != 2 || d.Models[0].ID != "mock-fast" || d.Models[1].ID != "mock-smart" || len(d.Modes) == 0 || d.OfferedAt == nil {
		t.Fatalf("offered: %+v", d)
	}
	task, sid = e.startMock("default", "@model", nil)
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "model: mock-fast")

	var bad kanban.AgentProfile
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": mock.AgentID, "name": "bad", "model": "gpt-nonexistent"}, &bad)
	_, sid = e.startMock("bad model", "@say hi", map[string]any{"agent_profile_id": bad.ID})
	s := e.waitState(sid, kanban.SessionFailed)
	if !strings.Contains(s.Error, "does not offer the profile's model; it offers: mock-fast, mock-smart") || strings.Contains(s.Error, "gpt-nonexistent") {
		t.Fatalf("error %q", s.Error)
	}
	var flagged kanban.AgentProfile
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": mock.AgentID, "name": "flag", "model": "--yolo"}, &flagged)
	_, sid = e.startMock("flag model", "@say hi", map[string]any{"agent_profile_id": flagged.ID})
	if s := e.waitState(sid, kanban.SessionFailed); !strings.Contains(s.Error, "not a valid model name") {
		t.Fatalf("error %q", s.Error)
	}
}

// An invalid agents file stops kandev serve at start with an error that
// names the entry and the field, never an env value.
func TestServeRefusesInvalidAgentsFile(t *testing.T) {
	t.Parallel()
	cfg := Config{DataDir: t.TempDir(), Token: "operator-test-token", Addr: "127.0.0.1:0", Out: io.Discard,
		Logger: slog.New(slog.DiscardHandler), Agents: AgentsConfig{Launch: true}}
	withAgentCommands(t, map[string]any{"my-agent": map[string]any{"args": []string{"x"}, "env": map[string]string{"MY_KEY": "top-secret-value"}}})(&cfg)
	b, err := start(context.Background(), cfg)
	if err == nil {
		_ = b.life.close(10 * time.Second)
		t.Fatal("kandev serve started with an agents file entry without a command")
	}
	if !strings.Contains(err.Error(), `agents file agents.json: entry "my-agent": field command: is required`) || strings.Contains(err.Error(), "top-secret-value") {
		t.Fatalf("error %q", err)
	}
}

// TestOfferedModelsKeptAcrossRestarts: what the mock agent's session
// offered (its models and modes) is offered by the next backend on the
// same data dir before any session of it ran there.
func TestOfferedModelsKeptAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inDir := func(c *Config) { c.DataDir = dir }
	e1 := newAgentEnv(t, inDir)
	if d := e1.detectAll(false)["mock-agent"]; d.OfferedAt != nil || len(d.Models) != 0 {
		t.Fatalf("offered before any session: %+v", d)
	}
	_, sid := e1.startMock("offer", "@say hi", nil)
	e1.waitState(sid, kanban.SessionIdle)
	first := e1.detectAll(false)["mock-agent"]
	if len(first.Models) != 2 || first.OfferedAt == nil {
		t.Fatalf("offered: %+v", first)
	}
	e1.close()

	e2 := newAgentEnv(t, inDir)
	d := e2.detectAll(false)["mock-agent"]
	if !slices.Equal(d.Models, first.Models) || !slices.Equal(d.Modes, first.Modes) || d.OfferedAt == nil ||
		d.OfferedAt.Sub(*first.OfferedAt).Abs() > time.Second {
		t.Fatalf("after the restart: %+v, want the offer of %+v", d, first)
	}
}
