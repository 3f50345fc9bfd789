package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// agentWait bounds every wait of the agent tests for a state to appear.
const agentWait = 30 * time.Second

// newAgentEnv is a backend that runs agents: the mock agent is the built
// kandev binary, as in production.
func newAgentEnv(t *testing.T, opts ...func(*Config)) *env {
	t.Helper()
	bin := kandevBinary(t)
	return newEnvWith(t, append([]func(*Config){func(c *Config) {
		c.Agents = AgentsConfig{Launch: true, Executable: bin, StopGrace: 2 * time.Second}
	}}, opts...)...)
}

// withAgentCommands writes the data dir's agents.json override file.
func withAgentCommands(t *testing.T, cmds map[string]any) func(*Config) {
	return func(c *Config) {
		b, err := json.Marshal(cmds)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.DataDir, "agents.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// profileOf returns the default profile of the named agent type.
func (e *env) profileOf(agentName string) *kanban.AgentProfile {
	e.t.Helper()
	var agents kanban.List[kanban.Agent]
	e.dispatch(kanban.ActionAgentList, action.ListIn{Limit: 50}, &agents)
	for _, a := range agents.Items {
		if a.Name != agentName {
			continue
		}
		var profs kanban.List[kanban.AgentProfile]
		e.dispatch(kanban.ActionAgentProfileList, map[string]any{"agent_id": a.ID}, &profs)
		for i := range profs.Items {
			if profs.Items[i].IsDefault {
				return &profs.Items[i]
			}
		}
	}
	e.t.Fatalf("no default profile for agent %s", agentName)
	return nil
}

// startMock creates a task whose mock agent session runs prompt and
// returns the task and its session id.
func (e *env) startMock(title, prompt string, extra map[string]any) (*kanban.Task, string) {
	e.t.Helper()
	in := map[string]any{"title": title, "description": prompt, "agent_profile_id": e.profileOf("mock-agent").ID}
	for k, v := range extra {
		in[k] = v
	}
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, in, &out)
	if out.SessionID == "" {
		e.t.Fatal("task.create started no session")
	}
	return out.Task, out.SessionID
}

// waitSession waits until the session satisfies ok and returns it.
func (e *env) waitSession(id string, what string, ok func(*kanban.Session) bool) *kanban.Session {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	var s kanban.Session
	for time.Now().Before(deadline) {
		e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: id}, &s)
		if ok(&s) {
			return &s
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("session %s never became %s (state %s, error %q)", id, what, s.State, s.Error)
	return nil
}

func (e *env) waitState(id string, st kanban.SessionState) *kanban.Session {
	e.t.Helper()
	return e.waitSession(id, string(st), func(s *kanban.Session) bool { return s.State == st })
}

// conversation returns every message of a task, oldest first.
func (e *env) conversation(taskID string) []kanban.Message {
	e.t.Helper()
	var out []kanban.Message
	in := action.MessageListIn{TaskID: taskID, Limit: 200}
	for {
		var l kanban.List[kanban.Message]
		e.dispatch(kanban.ActionMessageList, in, &l)
		out = append(out, l.Items...)
		if l.NextCursor == "" {
			return out
		}
		in.After = l.NextCursor
	}
}

// waitMessage waits until the task's conversation has a message of typ
// whose content contains want, and returns it.
func (e *env) waitMessage(taskID, typ, want string) kanban.Message {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		msgs := e.conversation(taskID)
		if i := slices.IndexFunc(msgs, func(m kanban.Message) bool { return m.Type == typ && strings.Contains(m.Content, want) }); i >= 0 {
			return msgs[i]
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("no %s message containing %q in the conversation: %s", typ, want, dumpConversation(e.conversation(taskID)))
	return kanban.Message{}
}

func dumpConversation(msgs []kanban.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("\n  [" + m.Type + " " + m.Author + "] " + m.Content)
	}
	return b.String()
}

func (e *env) task(id string) *kanban.Task {
	e.t.Helper()
	var t kanban.Task
	e.dispatch(kanban.ActionTaskGet, action.IDIn{ID: id}, &t)
	return &t
}

// waitTask waits until the task is in state st.
func (e *env) waitTask(id string, st kanban.TaskState) {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		if e.task(id).State == st {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("task never became %s (state %s)", st, e.task(id).State)
}

// runningAgents is how many agents the runtime is running.
func (e *env) runningAgents() int {
	return e.b.agents.Running()
}

// waitNoAgents waits until no agent process runs any more.
func (e *env) waitNoAgents() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	for e.runningAgents() > 0 {
		if ctx.Err() != nil {
			e.t.Fatalf("%d agents still run", e.runningAgents())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
