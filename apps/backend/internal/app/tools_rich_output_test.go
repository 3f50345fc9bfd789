package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// richWorkspace is a task workspace of text, binary and CSV files, and a
// symbolic link out of it.
func richWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Hello\n")
	write("big.log", strings.Repeat("é", 40<<10)) // 80 KiB of two-byte runes
	write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00")
	write("bench/latency.csv", "second,p50_ms,p99_ms\n1,0.3,1.5\n2,,1.1\n3,0.2,0.9\n")
	write("bad.csv", "second,p99_ms\n1,fast\n")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	return ws
}

// richOutputRefusals are show_rich_output_kandev's refusals on the
// richWorkspace.
var richOutputRefusals = []struct{ args, want string }{
	{fileBlock("../outside.txt"), "VALIDATION_ERROR: blocks[0].path: must stay inside the task's workspace"},
	{fileBlock("/etc/passwd"), "VALIDATION_ERROR: blocks[0].path: must be a path relative to the task's workspace"},
	{fileBlock("escape.txt"), "VALIDATION_ERROR: blocks[0].path: is a symbolic link; name a regular file of the task's workspace itself"},
	{fileBlock("missing.txt"), "NOT_FOUND: blocks[0].path: no such file in the task's workspace"},
	{fileBlock("bench"), "VALIDATION_ERROR: blocks[0].path: must name a regular file"},
	{`{"version":1,"title":"T","blocks":[{"type":"file","path":"README.md","repo":"other"}]}`,
		"VALIDATION_ERROR: blocks[0].repo: is not a repository of the task (give its name or id)"},
	{chartCSV(`"path":"bench/latency.txt","x_column":"second","series":[{"column":"p99_ms"}]`), "VALIDATION_ERROR: blocks[0].csv.path: must name a .csv file"},
	{chartCSV(`"path":"bench/latency.csv","x_column":"minute","series":[{"column":"p99_ms"}]`), "VALIDATION_ERROR: blocks[0].csv.x_column: is not a column of the CSV header"},
	{chartCSV(`"path":"bench/latency.csv","x_column":"second","series":[{"column":"p95_ms"}]`), "VALIDATION_ERROR: blocks[0].csv.series[0].column: is not a column of the CSV header"},
	{chartCSV(`"path":"bad.csv","x_column":"second","series":[{"column":"p99_ms"}]`), "VALIDATION_ERROR: blocks[0].csv.series[0]: row 1 of column p99_ms is not a number"},
	{`{"version":1,"title":"T","blocks":[{"type":"chart","chart_type":"bar","title":"C","summary":"s","labels":["a"],"series":[{"label":"x","values":[1]}],` +
		`"csv":{"path":"bench/latency.csv","x_column":"second","series":[{"column":"p99_ms"}]}}]}`, "VALIDATION_ERROR: blocks[0]: give labels and series, or csv, not both"},
	{`{"version":1,"title":"T","blocks":[{"type":"chart","chart_type":"bar","title":"C","summary":"s"}]}`, "VALIDATION_ERROR: blocks[0]: needs labels and series, or csv"},
}

// TestRichOutputReadsTheWorkspace: file blocks and CSV charts read the
// task's workspace (its repository checkout) with bounds and path checks;
// what was read is stored with the output; every refusal changes nothing.
func TestRichOutputReadsTheWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := richWorkspace(t)
	var created action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Rich", LocalPath: ws, StartAgent: &f}, &created)
	s := e.sessionMCP(kanban.ModeTask, created.Task.ID)

	for _, tc := range richOutputRefusals {
		refused(e, s.Client, "show_rich_output_kandev", tc.args, tc.want)
	}

	var out kanban.Artifact
	callJSON(e, s.Client, "show_rich_output_kandev", `{"version":1,"title":"Run","description":"What changed.","blocks":[
		{"type":"file","path":"README.md","caption":"Start here"},
		{"type":"file","path":"./big.log"},
		{"type":"file","path":"logo.png"},
		{"type":"chart","chart_type":"line","title":"Latency","summary":"Falls over the run.",
		 "csv":{"path":"bench/latency.csv","x_column":"second","series":[{"column":"p50_ms","label":"p50 (ms)"},{"column":"p99_ms"}]}}]}`, &out)
	var got struct {
		Description string `json:"description"`
		Blocks      []struct {
			Content   string   `json:"content"`
			MimeType  string   `json:"mime_type"`
			Size      int64    `json:"size"`
			Truncated bool     `json:"truncated"`
			Binary    bool     `json:"binary"`
			Labels    []string `json:"labels"`
			Series    []struct {
				Label  string     `json:"label"`
				Values []*float64 `json:"values"`
			} `json:"series"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(out.Data, &got); err != nil {
		t.Fatal(err)
	}
	b := got.Blocks
	if got.Description != "What changed." || b[0].Content != "# Hello\n" || !strings.HasPrefix(b[0].MimeType, "text/markdown") {
		t.Fatalf("README block: got %+v", b[0])
	}
	if !b[1].Truncated || b[1].Size != 80<<10 || len(b[1].Content) > 64<<10 || !strings.HasSuffix(b[1].Content, "é") {
		t.Fatalf("big file: got truncated=%v size=%d len=%d, want a whole-rune 64 KiB preview of 80 KiB", b[1].Truncated, b[1].Size, len(b[1].Content))
	}
	if !b[2].Binary || b[2].Content != "" || b[2].MimeType != "image/png" {
		t.Fatalf("binary file: got %+v, want binary without content", b[2])
	}
	if strings.Join(b[3].Labels, ",") != "1,2,3" || len(b[3].Series) != 2 || b[3].Series[0].Label != "p50 (ms)" ||
		b[3].Series[1].Label != "p99_ms" || b[3].Series[0].Values[1] != nil || *b[3].Series[1].Values[2] != 0.9 {
		t.Fatalf("CSV chart: got %+v, want labels 1..3, a gap, the column name as default label", b[3])
	}
}

func chartCSV(csv string) string {
	return `{"version":1,"title":"T","blocks":[{"type":"chart","chart_type":"line","title":"C","summary":"s","csv":{` + csv + `}}]}`
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
