package action

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ownEntries are the entries the action layer builds itself: versions and
// the process, and the task the bundle is for.
func (s *Service) ownEntries(version string) []DiagnosticEntry {
	return []DiagnosticEntry{
		{Name: "backend/versions.json", Build: func(context.Context, DiagnosticCall) ([]byte, error) {
			return indentJSON(buildVersions(version))
		}},
		{Name: "backend/process.json", Build: func(context.Context, DiagnosticCall) ([]byte, error) {
			return indentJSON(processStats())
		}},
		{Name: "backend/task.json", Build: s.taskEntry},
	}
}

func indentJSON(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

type versionsEntry struct {
	Kandev string `json:"kandev"`
	Go     string `json:"go"`
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Module string `json:"module,omitempty"`
	// VCS are the binary's vcs.* build settings (revision, time, modified).
	VCS          map[string]string `json:"vcs,omitempty"`
	Dependencies []string          `json:"dependencies,omitempty"`
}

func buildVersions(version string) versionsEntry {
	v := versionsEntry{Kandev: version, Go: goruntime.Version(), OS: goruntime.GOOS, Arch: goruntime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module = bi.Main.Path
	for _, st := range bi.Settings {
		if k, ok := strings.CutPrefix(st.Key, "vcs."); ok {
			if v.VCS == nil {
				v.VCS = map[string]string{}
			}
			v.VCS[k] = st.Value
		}
	}
	for _, d := range bi.Deps {
		v.Dependencies = append(v.Dependencies, d.Path+" "+d.Version)
	}
	return v
}

type processEntry struct {
	PID        int    `json:"pid"`
	CPUs       int    `json:"cpus"`
	Goroutines int    `json:"goroutines"`
	HeapBytes  uint64 `json:"heap_alloc_bytes"`
	SysBytes   uint64 `json:"sys_bytes"`
	NumGC      uint32 `json:"num_gc"`
}

func processStats() processEntry {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return processEntry{PID: os.Getpid(), CPUs: goruntime.NumCPU(), Goroutines: goruntime.NumGoroutine(),
		HeapBytes: m.HeapAlloc, SysBytes: m.Sys, NumGC: m.NumGC}
}

// taskEntry describes the bundle's task without its content (no title,
// prompt or conversation): its place, state, sources and sessions.
func (s *Service) taskEntry(ctx context.Context, c DiagnosticCall) ([]byte, error) {
	t := c.Task
	out := map[string]any{
		"task": map[string]any{"id": t.ID, "workspace_id": t.WorkspaceID, "workflow_id": t.WorkflowID,
			"workflow_step_id": t.WorkflowStepID, "parent_id": t.ParentID, "state": t.State, "autopilot": t.Autopilot,
			"workspace_mode": t.WorkspaceMode, "archived_at": t.ArchivedAt, "created_at": t.CreatedAt, "updated_at": t.UpdatedAt},
		"workspace_dir":  c.Dir,
		"caller_session": c.SessionID,
		"sessions":       sessionSummaries(c.Sessions),
	}
	links, err := s.store.ListTaskRepositories(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	repos := make([]map[string]any, 0, len(links))
	for _, l := range links {
		r, err := s.store.GetRepository(ctx, l.RepositoryID)
		if err != nil {
			return nil, err
		}
		repos = append(repos, map[string]any{"id": r.ID, "name": r.Name, "local_path": r.LocalPath,
			"remote_url": SafeURL(r.RemoteURL), "default_branch": r.DefaultBranch, "base_branch": l.BaseBranch,
			"checkout_branch": l.CheckoutBranch})
	}
	out["repositories"] = repos
	wts, err := s.store.ListWorktrees(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	worktrees := make([]map[string]any, 0, len(wts))
	for _, wt := range wts {
		worktrees = append(worktrees, map[string]any{"path": wt.Path, "branch": wt.Branch, "repository_id": wt.RepositoryID})
	}
	if len(worktrees) > 0 {
		out["worktree"] = worktrees[0]
		out["worktrees"] = worktrees
	}
	return indentJSON(out)
}

type sessionSummary struct {
	ID                string              `json:"id"`
	Name              string              `json:"name,omitempty"`
	State             kanban.SessionState `json:"state"`
	Mode              kanban.Mode         `json:"mcp_mode"`
	Capabilities      []string            `json:"capabilities"`
	Managed           bool                `json:"managed"`
	MCPAttached       bool                `json:"mcp_attached"`
	AgentProfileID    string              `json:"agent_profile_id,omitempty"`
	ExecutorProfileID string              `json:"executor_profile_id,omitempty"`
	Workdir           string              `json:"workdir,omitempty"`
	ExitCode          *int                `json:"exit_code,omitempty"`
	Error             string              `json:"error,omitempty"`
	CreatedAt         time.Time           `json:"created_at"`
	StartedAt         *time.Time          `json:"started_at,omitempty"`
	EndedAt           *time.Time          `json:"ended_at,omitempty"`
}

func sessionSummaries(in []kanban.Session) []sessionSummary {
	out := make([]sessionSummary, 0, len(in))
	for _, s := range in {
		out = append(out, sessionSummary{ID: s.ID, Name: s.Name, State: s.State, Mode: s.MCPMode, Capabilities: s.Capabilities,
			Managed: s.Managed, MCPAttached: s.MCPAttached, AgentProfileID: s.AgentProfileID, ExecutorProfileID: s.ExecutorProfileID,
			Workdir: s.Workdir, ExitCode: s.ExitCode, Error: s.Error, CreatedAt: s.CreatedAt, StartedAt: s.StartedAt, EndedAt: s.EndedAt})
	}
	return out
}

// SafeURL is u without its user information, query and fragment, which
// may hold credentials ("" stays ""). An scp-style git address
// (user@host:path) keeps host and path.
func SafeURL(u string) string {
	if u == "" {
		return ""
	}
	if !strings.Contains(u, "://") {
		return u[strings.LastIndexByte(u, '@')+1:]
	}
	p, err := url.Parse(u)
	if err != nil {
		return "[not a URL]"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}
