package action

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var bundleTime = time.Date(2026, 12, 1, 10, 20, 30, 0, time.UTC)

func TestWriteBundleNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	first, err := writeBundle(testDir(t, dir), bundleTime, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := writeBundle(testDir(t, dir), bundleTime, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if first != ".kandev/diagnostics/kandev-diagnostics-20261201T102030Z.zip" || second != ".kandev/diagnostics/kandev-diagnostics-20261201T102030Z-2.zip" {
		t.Fatalf("got %s and %s, want the UTC time, then the same with -2", first, second)
	}
	if b, err := os.ReadFile(filepath.Join(dir, first)); err != nil || string(b) != "one" {
		t.Fatalf("first bundle: got %q (%v), want it unchanged", b, err)
	}
}

// TestWriteBundleStaysInWorkspace: a link (or a file) in the way of
// .kandev/diagnostics is refused, and nothing is written outside.
func TestWriteBundleStaysInWorkspace(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, ".kandev")); err != nil {
		t.Fatal(err)
	}
	_, err := writeBundle(testDir(t, dir), bundleTime, []byte("x"))
	if kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("link out of the workspace: got %v, want CONFLICT", err)
	}
	if list, _ := os.ReadDir(outside); len(list) != 0 {
		t.Fatalf("got %d files written outside the workspace, want none", len(list))
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".kandev"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := writeBundle(testDir(t, dir), bundleTime, []byte("x")); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("a file in the way: got %v, want CONFLICT", err)
	}
}

func TestPruneKeepsTheNewest(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range bundlesKept + 2 {
		p, err := writeBundle(testDir(t, dir), bundleTime.Add(time.Duration(i)*time.Second), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		old := bundleTime.Add(time.Duration(i-100) * time.Minute) // modification order = write order
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	list, err := os.ReadDir(filepath.Join(dir, DiagnosticsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != bundlesKept+1 { // and .gitignore
		t.Fatalf("got %d files, want %d bundles and .gitignore", len(list), bundlesKept)
	}
	for i, p := range paths {
		_, err := os.Stat(filepath.Join(dir, p))
		if gone := os.IsNotExist(err); gone != (i < 2) {
			t.Fatalf("bundle %d: removed=%v, want only the 2 oldest removed", i, gone)
		}
	}
}

func TestBundleBounds(t *testing.T) {
	b := &bundle{}
	lines := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstu\n"), 3*maxBundleEntry/32) // 3 MiB of 32-byte lines
	b.add("backend/log.txt", lines)
	b.add("backend/big.json", make([]byte, maxBundleEntry+1))
	if e := b.entries[0]; !e.Truncated || e.Bytes > maxBundleEntry || e.Bytes < maxBundleEntry-32 || b.data[0][0] != '0' ||
		!bytes.HasSuffix(lines, b.data[0]) {
		t.Fatalf("log: got %+v, want its end in whole lines within %d bytes", e, maxBundleEntry)
	}
	if len(b.entries) != 1 || len(b.omitted) != 1 || !strings.HasPrefix(b.omitted[0], "backend/big.json: larger than") {
		t.Fatalf("got entries %v omitted %v, want the JSON entry left out", b.entries, b.omitted)
	}
	for i := range 4 {
		b.add("backend/part"+string(rune('a'+i))+".bin", make([]byte, maxBundleEntry))
	}
	if b.total > maxBundleBytes || len(b.omitted) != 2 {
		t.Fatalf("got %d bytes with %v omitted, want at most %d bytes and the last part left out", b.total, b.omitted, maxBundleBytes)
	}
}

// TestCreateBundleRefusals: every refusal comes before anything is
// collected or written.
func TestCreateBundleRefusals(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	f := false
	created := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, TaskCreateIn{Title: "Diag", LocalPath: ws, StartAgent: &f})
	bare := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, TaskCreateIn{Title: "No dir", StartAgent: &f})
	sess := call[SessionCreateOut](h, operator, kanban.ActionSessionCreate, SessionCreateIn{TaskID: bare.Task.ID})
	self := Principal{Kind: Session, SessionID: sess.Session.ID, TaskID: bare.Task.ID, WorkspaceID: h.ws}
	for _, tc := range []struct {
		p    Principal
		in   string
		code kanban.Code
		msg  string
	}{
		{operator, `{"source":"all"}`, kanban.CodeValidation, "task_id: is required for the operator"},
		{operator, `{"source":"everything","task_id":"` + created.Task.ID + `"}`, kanban.CodeValidation,
			"invalid arguments for diagnostic_bundle.create: /source: must be one of: backend, frontend, all (enum)"},
		{operator, `{"source":"all","task_id":"` + kanban.NewID() + `"}`, kanban.CodeNotFound, "task not found"},
		{operator, `{"source":"all","task_id":"` + bare.Task.ID + `"}`, kanban.CodeNotFound, "the task's workspace directory does not exist on this machine yet"},
		{self, `{"source":"all","task_id":"` + created.Task.ID + `"}`, kanban.CodeForbidden, "a session writes diagnostic bundles only into its own task's workspace"},
		{self, `{"source":"backend"}`, kanban.CodeNotFound, "the task's workspace directory does not exist on this machine yet"},
	} {
		msg := h.refuse(tc.p, kanban.ActionDiagnosticBundleCreate, tc.in, tc.code)
		if tc.msg != "" && msg != tc.msg {
			t.Errorf("%s: got %q, want %q", tc.in, msg, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".kandev")); !os.IsNotExist(err) {
		t.Fatalf("refusals wrote into the workspace (stat: %v)", err)
	}
	out := call[DiagnosticBundleOut](h, operator, kanban.ActionDiagnosticBundleCreate, map[string]string{"source": "frontend", "task_id": created.Task.ID})
	if out.Source != "frontend" || len(out.Entries) != 1 || out.Entries[0].Name != "manifest.json" {
		t.Fatalf("got %+v, want a frontend bundle with only its manifest (no frontend entries configured)", out)
	}
	if msg := h.refuse(operator, kanban.ActionDiagnosticBundleCreate, map[string]string{"source": "all", "task_id": created.Task.ID}, kanban.CodeUnavailable); !strings.Contains(msg, "retry in") {
		t.Fatalf("got %q, want a retry hint", msg)
	}
}

// TestBundleEntriesAndSecrets: application entries are redacted with the
// configured secrets; a failing or empty entry is left out and said so;
// secrets that cannot be read stop the bundle before anything is written.
func TestBundleEntriesAndSecrets(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	f := false
	created := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, TaskCreateIn{Title: "Diag", LocalPath: ws, StartAgent: &f})
	entry := func(name, body string, err error) DiagnosticEntry {
		return DiagnosticEntry{Name: name, Build: func(context.Context, DiagnosticCall) ([]byte, error) { return []byte(body), err }}
	}
	failing := errors.New("store unreachable")
	reg, _ := mustNew(t, Deps{Store: h.st, FS: testPolicy(t), Diagnostics: Diagnostics{Version: "v-test",
		Secrets: func(context.Context) ([]string, error) { return nil, failing },
		Entries: []DiagnosticEntry{entry("backend/app.txt", "value s3cr3t-value and Bearer abc.def", nil)}}})
	in := payload(t, map[string]string{"source": "backend", "task_id": created.Task.ID})
	if _, err := reg.Dispatch(context.Background(), operator, kanban.ActionDiagnosticBundleCreate, in); !errors.Is(err, failing) {
		t.Fatalf("got %v, want the secrets' error", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".kandev")); !os.IsNotExist(err) {
		t.Fatalf("a bundle without its secrets wrote into the workspace (stat: %v)", err)
	}

	reg, _ = mustNew(t, Deps{Store: h.st, FS: testPolicy(t), Diagnostics: Diagnostics{Version: "v-test",
		Secrets: func(context.Context) ([]string, error) { return []string{"s3cr3t-value"}, nil },
		Entries: []DiagnosticEntry{entry("backend/app.txt", "value s3cr3t-value and Bearer abc.def", nil),
			entry("backend/broken.json", "", failing), entry("backend/empty.txt", "", nil), entry("frontend/x.json", "{}", nil)}}})
	res, err := reg.Dispatch(context.Background(), operator, kanban.ActionDiagnosticBundleCreate, in)
	if err != nil {
		t.Fatal(err)
	}
	out := res.(*DiagnosticBundleOut)
	zr, err := zip.OpenReader(out.AbsolutePath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zr.Close() }()
	var names []string
	var app []byte
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "backend/app.txt" {
			rc, _ := f.Open()
			app, _ = io.ReadAll(rc)
			_ = rc.Close()
		}
	}
	if got := strings.Join(names, ","); got != "manifest.json,backend/versions.json,backend/process.json,backend/task.json,backend/app.txt" {
		t.Fatalf("got entries %s, want the backend ones only, manifest first", got)
	}
	if string(app) != "value [redacted] and Bearer [redacted]" {
		t.Fatalf("got %q, want the secret and the bearer value redacted", app)
	}
	if len(out.Omitted) != 2 || !strings.HasPrefix(out.Omitted[0], "backend/broken.json: could not be collected (ref ") ||
		out.Omitted[1] != "backend/empty.txt: nothing to include" {
		t.Fatalf("got omitted %q, want the failing entry (with a ref, not its error) and the empty one", out.Omitted)
	}
}
