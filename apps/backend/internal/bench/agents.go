package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// AgentRun is section 8: what running agents costs. FirstToolCall is the
// time from a create_task_kandev call (start_agent, the mock agent) to the
// agent's first tool call taking effect in the backend (the task.created
// event of the subtask it creates), sequential, one new agent each.
// Memory is kandev serve's resident set growth per live (idle) agent
// session, and what one agent's processes (the mock agent and its kandev
// mcp) hold themselves.
type AgentRun struct {
	FirstToolCall LatencyStat `json:"first_tool_call"`
	Sessions      int         `json:"sessions"`
	// ServeRSSBaseKB and ServeRSSKB are kandev serve's VmRSS before the
	// first agent and with Sessions agents idle.
	ServeRSSBaseKB int     `json:"serve_rss_base_kb"`
	ServeRSSKB     int     `json:"serve_rss_kb"`
	PerSessionKB   float64 `json:"serve_rss_per_session_kb"`
	// AgentProcessKB is the mean VmRSS of one agent's processes.
	AgentProcessKB float64 `json:"agent_processes_rss_kb"`
	// DockerFirstToolCall is FirstToolCall with an exec-docker profile
	// (MeasureDockerAgents); DockerNote says why it is missing.
	DockerFirstToolCall *LatencyStat `json:"docker_first_tool_call,omitempty"`
	DockerNote          string       `json:"docker_note,omitempty"`
	// SSHFirstToolCall is FirstToolCall with an exec-ssh profile on a
	// loopback sshd (MeasureSSHAgents); SSHNote says why it is missing.
	SSHFirstToolCall *LatencyStat `json:"ssh_first_tool_call,omitempty"`
	SSHNote          string       `json:"ssh_note,omitempty"`
}

// agentSamples is how many agents section 8 starts (each stays idle, so
// the memory figure is measured with that many live sessions).
const agentSamples = 20

// MeasureAgents runs section 8 against its own kandev serve.
func MeasureAgents(ctx context.Context, cfg Config) (*AgentRun, error) {
	dir, err := mkdir(cfg, "agents")
	if err != nil {
		return nil, err
	}
	b, err := startBackendWith(ctx, cfg, "agents-backend", dir, "--max-agents", strconv.Itoa(agentSamples+1))
	if err != nil {
		return nil, err
	}
	defer b.stop()
	out := &AgentRun{Sessions: agentSamples}
	if out.ServeRSSBaseKB, err = rssKB(b.cmd.Process.Pid); err != nil {
		return nil, err
	}
	sess, err := openSession(ctx, newHTTPClient(1), b.base+"/mcp", b.token)
	if err != nil {
		return nil, err
	}
	profile, err := mockProfile(ctx, sess)
	if err != nil {
		return nil, err
	}
	events, closeEvents, err := watchCreated(ctx, b)
	if err != nil {
		return nil, err
	}
	defer closeEvents()
	samples, err := firstToolCalls(ctx, sess, events, agentSamples, "Agent", map[string]any{"agent_profile_id": profile}, 30*time.Second)
	if err != nil {
		return nil, err
	}
	out.FirstToolCall = Latency(samples)
	time.Sleep(time.Second) // let the agents settle idle
	if out.ServeRSSKB, err = rssKB(b.cmd.Process.Pid); err != nil {
		return nil, err
	}
	out.PerSessionKB = float64(out.ServeRSSKB-out.ServeRSSBaseKB) / float64(agentSamples)
	total, n := childrenRSS(b.cmd.Process.Pid)
	if n > 0 {
		out.AgentProcessKB = float64(total) / float64(agentSamples)
	}
	cfg.Logf("agents: first tool call p50 %.1f ms p99 %.1f ms; serve +%.0f KB per session; agent processes %.0f KB each",
		out.FirstToolCall.P50Ms, out.FirstToolCall.P99Ms, out.PerSessionKB, out.AgentProcessKB)
	return out, nil
}

// mockProfile finds the mock agent's default profile over MCP.
func mockProfile(ctx context.Context, s *session) (string, error) {
	var agents struct {
		Items []struct{ ID, Name string } `json:"items"`
	}
	var profiles struct {
		Items []struct {
			ID      string `json:"id"`
			AgentID string `json:"agent_id"`
		} `json:"items"`
	}
	for tool, v := range map[string]any{"list_agents_kandev": &agents, "list_agent_profiles_kandev": &profiles} {
		body, err := s.call(ctx, tool, json.RawMessage(`{}`))
		if err != nil {
			return "", err
		}
		if err := decodeStructured(body, v); err != nil {
			return "", err
		}
	}
	for _, a := range agents.Items {
		for _, p := range profiles.Items {
			if a.Name == "mock-agent" && p.AgentID == a.ID {
				return p.ID, nil
			}
		}
	}
	return "", errors.New("no mock-agent profile")
}

func decodeStructured(body []byte, v any) error {
	raw, err := structured(body)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// createdWatch is a WebSocket subscription to task.created events.
type createdWatch struct {
	mu     sync.Mutex
	titles map[string]chan struct{}
}

func (w *createdWatch) ch(title string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.titles[title]
	if !ok {
		c = make(chan struct{})
		w.titles[title] = c
	}
	return c
}

func (w *createdWatch) wait(ctx context.Context, title string, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ch(title):
		return nil
	case <-t.C:
		return fmt.Errorf("the agent's tool call %s did not reach the backend within %s", title, d)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchCreated subscribes to the default workspace's events.
func watchCreated(ctx context.Context, b *backendProc) (*createdWatch, func(), error) {
	w := &createdWatch{titles: map[string]chan struct{}{}}
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: "ws" + strings.TrimPrefix(b.base, "http") + "/ws", Token: b.token,
		OnNotification: func(name string, payload json.RawMessage) {
			if name != kanban.EventTaskCreated.Name() {
				return
			}
			var t struct{ Title string }
			if json.Unmarshal(payload, &t) == nil {
				c := w.ch(t.Title)
				w.mu.Lock()
				select {
				case <-c:
				default:
					close(c)
				}
				w.mu.Unlock()
			}
		}})
	if err != nil {
		return nil, nil, err
	}
	var wsl struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := c.Call(ctx, kanban.ActionWorkspaceList, map[string]any{}, &wsl); err != nil || len(wsl.Items) == 0 {
		_ = c.Close()
		return nil, nil, errors.Join(errors.New("list workspaces"), err)
	}
	if err := c.Call(ctx, kanban.ActionSubscribe, map[string]any{"topics": []string{"workspace:" + wsl.Items[0].ID}}, nil); err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return w, func() { _ = c.Close() }, nil
}

// rssKB reads a process's resident set size.
func rssKB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no VmRSS")
}

// childrenRSS sums the resident sets of pid's descendants.
func childrenRSS(pid int) (total, n int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); i >= 0 && len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	descends := func(p int) bool {
		for p > 1 {
			if p = parent[p]; p == pid {
				return true
			}
		}
		return false
	}
	for p := range parent {
		if descends(p) {
			if kb, err := rssKB(p); err == nil {
				total += kb
				n++
			}
		}
	}
	return total, n
}

// firstToolCalls creates n tasks over MCP (with the extra arguments, such
// as the profiles) whose mock agent's first act is a create_task_kandev
// call, and returns for each the time from the create to that call's task
// seen by the backend (each wait bounded by wait).
func firstToolCalls(ctx context.Context, sess *session, events *createdWatch, n int, label string, extra map[string]any, wait time.Duration) ([]time.Duration, error) {
	samples := make([]time.Duration, 0, n)
	for i := range n {
		probe := fmt.Sprintf("%s-probe-%d", strings.ToLower(label), i)
		in := map[string]any{"title": fmt.Sprintf("%s bench %d", label, i),
			"prompt": `@tool create_task_kandev {"title":"` + probe + `","start_agent":false}`}
		for k, v := range extra {
			in[k] = v
		}
		args, _ := json.Marshal(in)
		start := time.Now()
		if _, err := sess.call(ctx, "create_task_kandev", args); err != nil {
			return nil, err
		}
		if err := events.wait(ctx, probe, wait); err != nil {
			return nil, err
		}
		samples = append(samples, time.Since(start))
	}
	return samples, nil
}
