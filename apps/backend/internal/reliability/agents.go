package reliability

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// mockProfile returns the seeded mock-agent's default profile id.
func mockProfile(ctx context.Context, o *ops) (string, error) {
	var agents kanban.List[kanban.Agent]
	if err := o.call(ctx, kanban.ActionAgentList, action.ListIn{}, &agents); err != nil {
		return "", err
	}
	for _, a := range agents.Items {
		if a.Name != "mock-agent" {
			continue
		}
		var profs kanban.List[kanban.AgentProfile]
		if err := o.call(ctx, kanban.ActionAgentProfileList, action.AgentProfileListIn{AgentID: a.ID}, &profs); err != nil {
			return "", err
		}
		if len(profs.Items) > 0 {
			return profs.Items[0].ID, nil
		}
	}
	return "", fmt.Errorf("no mock-agent profile")
}

// agentTask creates a task whose session runs the mock agent with prompt.
// parentID may be empty.
func agentTask(ctx context.Context, o *ops, b *board, profileID, parentID, title, prompt string) (*action.TaskCreateOut, error) {
	var out action.TaskCreateOut
	err := o.call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: b.workspaceID, ParentID: parentID, Title: title,
		Prompt: prompt, AgentProfileID: profileID}, &out)
	if err == nil && out.SessionID == "" {
		err = fmt.Errorf("task.create started no session")
	}
	return &out, err
}

// waitSession polls a session (every 50 ms, at most d) until ok accepts
// it, and returns the last state read.
func waitSession(ctx context.Context, o *ops, id string, d time.Duration, ok func(*kanban.Session) bool) (*kanban.Session, bool) {
	deadline := time.Now().Add(d)
	var s kanban.Session
	for {
		err := o.call(ctx, kanban.ActionSessionGet, action.IDIn{ID: id}, &s)
		if err == nil && ok(&s) {
			return &s, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return &s, false
		}
		sleepCtx(ctx, 50*time.Millisecond)
	}
}

// descendants lists pid's children, their children and so on.
func descendants(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

// children lists the processes whose parent is pid (from /proc).
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ")".
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 1 && f[1] == strconv.Itoa(pid) {
				out = append(out, child)
			}
		}
	}
	return out
}

// alive reports the pids of ps that still run (zombies count as gone).
func alive(ps []int) []int {
	var out []int
	for _, p := range ps {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// waitGone waits (at most d) for ps to exit; it returns those left, which
// it then kills (each by its own pid: processes our server started).
func waitGone(ps []int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for len(alive(ps)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	left := alive(ps)
	for _, p := range left {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return left
}
