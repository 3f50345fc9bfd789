package app

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// readBundle opens a bundle with archive/zip and returns its files by
// name, and their names in zip order.
func readBundle(t *testing.T, path string) (map[string][]byte, []string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("open bundle: %v", err)
	}
	defer func() { _ = zr.Close() }()
	files, order := map[string][]byte{}, []string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], order = b, append(order, f.Name)
	}
	return files, order
}

// workspaceTask creates a task working in a fresh folder (its
// local_path) and a task-mode session for it.
func workspaceTask(e *env, title string) (string, *session) {
	ws := e.t.TempDir()
	var created action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: title, LocalPath: ws, StartAgent: &f}, &created)
	return ws, e.sessionMCP(kanban.ModeTask, created.Task.ID)
}

// TestDiagnosticBundle: a session's bundle lands in its task's workspace
// under a predictable name; the zip holds what the result lists; refused
// calls write nothing; a second bundle within 10 s is refused.
func TestDiagnosticBundle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, s := workspaceTask(e, "Diagnose")

	for _, tc := range []struct{ args, want string }{
		{`{}`, `invalid arguments for get_diagnostic_bundle_kandev: / is missing required "source"`},
		{`{"source":"Backend"}`, `invalid arguments for get_diagnostic_bundle_kandev: /source: must be one of: backend, frontend, all (enum)`},
		{`{"source":"all","task_id":"self"}`, `invalid arguments for get_diagnostic_bundle_kandev: unknown field at /; allowed: source`},
		{`{"source":1}`, `invalid arguments for get_diagnostic_bundle_kandev: /source: expected string`},
	} {
		refused(e, s.Client, "get_diagnostic_bundle_kandev", tc.args, tc.want)
	}
	if _, err := os.Stat(filepath.Join(ws, ".kandev")); !os.IsNotExist(err) {
		t.Fatalf("refused calls created .kandev in the workspace (stat: %v)", err)
	}

	var out action.DiagnosticBundleOut
	callJSON(e, s.Client, "get_diagnostic_bundle_kandev", `{"source":"all"}`, &out)
	if !regexp.MustCompile(`^\.kandev/diagnostics/kandev-diagnostics-\d{8}T\d{6}Z\.zip$`).MatchString(out.Path) ||
		out.AbsolutePath != "" || out.Source != "all" {
		t.Fatalf("got path %q absolute %q source %q, want .kandev/diagnostics/kandev-diagnostics-<UTC>.zip and no absolute path", out.Path, out.AbsolutePath, out.Source)
	}
	zipPath := filepath.Join(ws, filepath.FromSlash(out.Path))
	st, err := os.Stat(zipPath)
	if err != nil || st.Size() != out.Bytes || st.Mode().Perm() != 0o600 {
		t.Fatalf("bundle file: %v, size %d mode %v, want %d bytes, 0600", err, st.Size(), st.Mode(), out.Bytes)
	}
	files, order := readBundle(t, zipPath)
	var names []string
	for _, en := range out.Entries {
		names = append(names, en.Name)
		if len(files[en.Name]) != en.Bytes {
			t.Errorf("%s: %d bytes in the zip, result says %d", en.Name, len(files[en.Name]), en.Bytes)
		}
	}
	want := []string{"manifest.json", "backend/versions.json", "backend/process.json", "backend/task.json",
		"backend/config.json", "backend/store.json", "backend/log.txt", "frontend/board.json"}
	if !slices.Equal(order, names) || !slices.Equal(names, want) {
		t.Fatalf("got entries %v (zip order %v), want %v", names, order, want)
	}
	if len(out.Omitted) != 1 || !strings.HasPrefix(out.Omitted[0], "backend/agent-stderr.txt: ") {
		t.Fatalf("got omitted %v, want the agent stderr (this backend runs no agent)", out.Omitted)
	}
	checkBundleContent(t, files, s)
	if ignore, err := os.ReadFile(filepath.Join(ws, ".kandev", "diagnostics", ".gitignore")); err != nil || string(ignore) != "*\n" {
		t.Fatalf("got .gitignore %q (%v), want bundles kept out of commits", ignore, err)
	}

	// The wait left is whole seconds rounded up: 10s unless this machine
	// took over a second between the two calls.
	before := e.fingerprint()
	again := e.call(s.Client, "get_diagnostic_bundle_kandev", `{"source":"backend"}`)
	if !again.IsError || !regexp.MustCompile(`^UNAVAILABLE: a diagnostic bundle was written for this caller less than 10s ago; retry in ([1-9]|10)s$`).MatchString(text(again)) {
		t.Fatalf("a second bundle within 10s: got error=%v %q, want UNAVAILABLE with the seconds left", again.IsError, text(again))
	}
	if e.fingerprint() != before {
		t.Fatal("the refused bundle changed the database")
	}
	if list, _ := os.ReadDir(filepath.Join(ws, ".kandev", "diagnostics")); len(list) != 2 {
		t.Fatalf("got %d files in the diagnostics folder, want the bundle and .gitignore only", len(list))
	}
}

// checkBundleContent checks that each entry says what it should.
func checkBundleContent(t *testing.T, files map[string][]byte, s *session) {
	t.Helper()
	var man struct {
		TaskID        string `json:"task_id"`
		CallerSession string `json:"caller_session"`
		Entries       []action.BundleEntry
	}
	var versions struct{ Kandev, Go, OS, Arch string }
	var store kanban.StoreReport
	var task struct {
		Task     map[string]any   `json:"task"`
		Sessions []map[string]any `json:"sessions"`
	}
	var config struct {
		DataDir    string `json:"data_dir"`
		AgentTypes struct {
			Types []struct{ Name string } `json:"types"`
		} `json:"agent_types"`
	}
	var board struct {
		AssetCount    int    `json:"asset_count"`
		BrowserErrors string `json:"browser_errors"`
		Assets        []struct{ Path, SHA256 string }
	}
	for name, v := range map[string]any{"manifest.json": &man, "backend/versions.json": &versions, "backend/store.json": &store,
		"backend/task.json": &task, "backend/config.json": &config, "frontend/board.json": &board} {
		if err := json.Unmarshal(files[name], v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if man.TaskID != s.TaskID || man.CallerSession != s.ID || len(man.Entries) != 7 {
		t.Errorf("manifest: got task %s session %s with %d entries", man.TaskID, man.CallerSession, len(man.Entries))
	}
	if versions.Kandev == "" || !strings.HasPrefix(versions.Go, "go") || versions.OS == "" {
		t.Errorf("versions: got %+v", versions)
	}
	if store.Engine != "sqlite" || store.EngineVersion == "" || store.SchemaVersion == 0 || store.Counts.Tasks != 1 || store.Counts.Sessions != 1 {
		t.Errorf("store: got %+v, want SQLite with its schema and 1 task, 1 session", store)
	}
	if task.Task["id"] != s.TaskID || task.Task["title"] != nil || len(task.Sessions) != 1 || task.Sessions[0]["id"] != s.ID {
		t.Errorf("task: got %v, want the task without its title and its session", task)
	}
	if config.DataDir == "" || len(config.AgentTypes.Types) < 5 {
		t.Errorf("config: got %+v, want the data dir and the built-in agent types", config)
	}
	if board.AssetCount == 0 || board.AssetCount != len(board.Assets) || !strings.HasPrefix(board.BrowserErrors, "not collected") {
		t.Errorf("board: got %d assets, browser errors %q", board.AssetCount, board.BrowserErrors)
	}
	if !strings.HasPrefix(string(files["backend/log.txt"]), "# kandev serve: the last ") {
		t.Errorf("log: got %.200q", files["backend/log.txt"])
	}
}
