package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Bounds of diagnostic bundles.
const (
	// bundleWait bounds collecting and writing one bundle (below the
	// 30 s a client waits for an action).
	bundleWait = 20 * time.Second
	// bundleEvery is the shortest interval between two bundles of one
	// session (of one task, for the operator).
	bundleEvery = 10 * time.Second
	// bundleSessions is how many of the task's newest sessions a bundle
	// describes.
	bundleSessions = 20
)

// bundleSources are the sources a bundle may collect, each with the entry
// folders it includes, in order.
var bundleSources = []struct {
	name    string
	folders []string
}{
	{"backend", []string{"backend"}},
	{"frontend", []string{"frontend"}},
	{"all", []string{"backend", "frontend"}},
}

// BundleSources lists the sources of diagnostic_bundle.create.
func BundleSources() []string {
	out := make([]string, len(bundleSources))
	for i, b := range bundleSources {
		out[i] = b.name
	}
	return out
}

// bundleFolders returns the entry folders of source.
func bundleFolders(source string) ([]string, bool) {
	for _, b := range bundleSources {
		if b.name == source {
			return b.folders, true
		}
	}
	return nil, false
}

// DiagnosticEntry is one file of a bundle, built each time a bundle is
// written.
type DiagnosticEntry struct {
	// Name is its path in the zip, under its folder ("backend/log.txt").
	Name string
	// Build returns its content; nil or empty leaves the entry out. Every
	// entry is redacted before it is stored.
	Build func(ctx context.Context, c DiagnosticCall) ([]byte, error)
}

// DiagnosticCall is what a bundle's entries are built for.
type DiagnosticCall struct {
	Task *kanban.Task
	// Dir is the task's workspace directory (absolute).
	Dir string
	// SessionID is the calling session ("" for the operator).
	SessionID string
	// Sessions are the task's newest sessions (at most 20), newest first.
	Sessions []kanban.Session
}

// Diagnostics configures diagnostic bundles beyond what the action layer
// knows itself: the application's version and its own entries.
type Diagnostics struct {
	Version string
	// Entries are the application's entries, each in its folder
	// ("backend/…", "frontend/…").
	Entries []DiagnosticEntry
	// Secrets returns the values known to be secret (the operator token,
	// configured header and environment values): they are redacted
	// wherever they appear, on top of credential-shaped text. When they
	// cannot be read, no bundle is written.
	Secrets func(ctx context.Context) ([]string, error)
}

// DiagnosticBundleIn is the payload of diagnostic_bundle.create.
type DiagnosticBundleIn struct {
	// Source is backend, frontend or all.
	Source string `json:"source,omitzero"`
	// TaskID is the task whose workspace receives the bundle: required for
	// the operator; a session may only name its own task (default).
	TaskID string `json:"task_id,omitempty"`
}

// DiagnosticBundleOut is the result of diagnostic_bundle.create.
type DiagnosticBundleOut struct {
	// Path is the bundle's path relative to the task's workspace.
	Path string `json:"path"`
	// AbsolutePath is the bundle's path on the server: for the operator
	// only (a session learns no absolute server path).
	AbsolutePath string        `json:"absolute_path,omitempty"`
	Bytes        int64         `json:"bytes"`
	Source       string        `json:"source"`
	CreatedAt    time.Time     `json:"created_at"`
	Entries      []BundleEntry `json:"entries"`
	// Omitted says what was left out and why.
	Omitted []string `json:"omitted,omitempty"`
}

// BundleEntry is one file of a written bundle.
type BundleEntry struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
	// Truncated: the entry kept only its end (logs) to stay within bounds.
	Truncated bool `json:"truncated,omitempty"`
}

// diagnostics is the configuration and rate limit of bundles.
type diagnostics struct {
	mu       sync.Mutex
	cfg      Diagnostics
	building bool
	last     map[string]time.Time // by session (task for the operator)
}

var _ = declare(Def[DiagnosticBundleIn, *DiagnosticBundleOut]{
	Name:   kanban.ActionDiagnosticBundleCreate,
	Effect: External,
	Allow:  AllowOperator | AllowSession,
	Schema: schema.Obj("", schema.P{
		"source":  schema.Enum("Diagnostic source to collect: backend, frontend, or all", BundleSources()...),
		"task_id": idProp("Task whose workspace receives the bundle (required for the operator; a session's own task)."),
	}, "source"),
	Run: (*Service).createBundle,
})

// createBundle checks the call, then collects, redacts and writes a bundle
// into the task's workspace. Refusals write nothing.
func (s *Service) createBundle(ctx context.Context, p Principal, in DiagnosticBundleIn) (*DiagnosticBundleOut, error) {
	folders, ok := bundleFolders(in.Source)
	if !ok {
		return nil, kanban.FieldError("source", "must be backend, frontend or all")
	}
	t, err := s.bundleTask(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	dir, err := s.dirs.Existing(ctx, t, "")
	if err != nil {
		return nil, err
	}
	key := "task:" + t.ID
	if p.Kind == Session {
		key = "session:" + p.SessionID
	}
	cfg, err := s.diag.begin(key, time.Now())
	if err != nil {
		return nil, err
	}
	written := false
	defer func() { s.diag.end(key, written) }()
	ctx, cancel := context.WithTimeout(ctx, bundleWait)
	defer cancel()
	call := DiagnosticCall{Task: t, Dir: dir.Path, SessionID: p.SessionID}
	sessions, err := s.store.ListSessions(ctx, t.ID, kanban.Page{Limit: bundleSessions})
	if err != nil {
		return nil, err
	}
	call.Sessions = sessions.Items
	var secrets []string
	if cfg.Secrets != nil {
		if secrets, err = cfg.Secrets(ctx); err != nil {
			return nil, fmt.Errorf("read the secrets to redact: %w", err)
		}
	}
	red := redact.New(secrets...)
	if p.Kind != Operator { // an agent learns no absolute server path from its bundle either
		red = red.WithPaths(serverPaths(s.dirs.Guard.DataDir()))
	}
	b := s.collect(ctx, cfg, call, folders, red)
	out, err := b.write(dir, in.Source)
	if err != nil {
		return nil, err
	}
	written = true
	if p.Kind != Operator { // no absolute server path for an agent: the relative one is its own
		out.AbsolutePath = ""
	}
	return out, nil
}

// serverPaths labels the absolute paths of the server's files: the data
// dir and the backend user's home directory.
func serverPaths(dataDir string) map[string]string {
	out := map[string]string{}
	if abs, err := filepath.Abs(dataDir); err == nil {
		out[abs] = "<data dir>"
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			out[real] = "<data dir>"
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		out[home] = "~"
	}
	return out
}

// bundleTask is the task whose workspace receives a bundle: a session's
// own task (it may name no other), or the task the operator names.
func (s *Service) bundleTask(ctx context.Context, p Principal, id string) (*kanban.Task, error) {
	if p.Kind == Session {
		if id != "" && id != "self" && id != p.TaskID {
			return nil, kanban.Errorf(kanban.CodeForbidden, "a session writes diagnostic bundles only into its own task's workspace")
		}
		return s.store.GetTask(ctx, p.TaskID)
	}
	if id == "" {
		return nil, kanban.FieldError("task_id", "is required for the operator")
	}
	return s.store.GetTask(ctx, id)
}

// begin reserves the right to write a bundle for key: one bundle at a time
// per backend, and one per key per bundleEvery.
func (d *diagnostics) begin(key string, now time.Time) (Diagnostics, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.building {
		return Diagnostics{}, kanban.Errorf(kanban.CodeUnavailable, "another diagnostic bundle is being written; retry in a few seconds")
	}
	if at, ok := d.last[key]; ok && now.Sub(at) < bundleEvery {
		wait := (bundleEvery - now.Sub(at)).Round(time.Second)
		return Diagnostics{}, kanban.Errorf(kanban.CodeUnavailable,
			"a diagnostic bundle was written for this caller less than %s ago; retry in %s", bundleEvery, max(wait, time.Second))
	}
	for k, at := range d.last { // keep the map as small as the callers of the last interval
		if now.Sub(at) >= bundleEvery {
			delete(d.last, k)
		}
	}
	d.building = true
	cfg := d.cfg
	cfg.Entries = slices.Clone(cfg.Entries)
	return cfg, nil
}

// end releases the reservation; a written bundle starts key's interval.
func (d *diagnostics) end(key string, written bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.building = false
	if written {
		d.last[key] = time.Now()
	}
}
