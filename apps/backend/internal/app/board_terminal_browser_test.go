//go:build linux

package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// termRows is the text of the terminal's rows, one per line.
const termRows = `[...document.querySelectorAll('#terminal-screen .xterm-rows > div')].map((r) => r.textContent).join('\n')`

// TestBoardTerminal: the task page's Terminal tab starts a shell in the
// task's working directory; what is typed runs there and its output is
// shown, with xterm.js's styles applied under the board's strict CSP (no
// violation reported). Stopping the task ends the shell: the page says
// so and the process is gone.
func TestBoardTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, dir := termTask(t, e, "Terminal task")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.js(`window.__csp = []; document.addEventListener('securitypolicyviolation', (ev) => window.__csp.push(ev.violatedDirective + ' ' + ev.blockedURI)); true`, nil)
	b.click("#tab-terminal")
	b.until("the shell", `document.getElementById('terminal-status').textContent === 'Shell started.'`)
	b.js(`document.querySelector('#terminal-screen .xterm-helper-textarea').focus(); true`, nil)
	if _, err := chromedp.Call(b.ctx, input.InsertText, input.InsertTextParams{Text: "echo hello-$((6*7)); echo pid=$$.; pwd"}); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.KeyEvent(kb.Enter))
	// The three commands' output lines arrive in order; wait for the last
	// (pwd's), not the first, before reading them.
	dirJS, _ := json.Marshal(dir)
	b.until("pwd's output", termRows+`.split('\n').some((r) => r.trim() === `+string(dirJS)+`)`)
	rows := b.str(termRows)
	m := regexp.MustCompile(`pid=(\d+)\.`).FindStringSubmatch(rows)
	if m == nil || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(dir)+`\s*$`).MatchString(rows) {
		t.Fatalf("terminal rows: got %q, want the pid and the working directory %s", rows, dir)
	}
	pid, _ := strconv.Atoi(m[1])
	if !procAlive(pid) {
		t.Fatalf("shell %d: want it running", pid)
	}
	b.until("xterm's measured styles", `document.adoptedStyleSheets.some((s) => [...s.cssRules].some((r) => r.cssText.includes('xterm')))`)
	var violations []string
	b.js(`window.__csp`, &violations)
	if len(violations) != 0 {
		t.Fatalf("CSP violations: %v", violations)
	}
	b.shot("board-terminal")
	e.dispatch(kanban.ActionTaskStop, action.TaskStopIn{TaskID: task.ID}, nil)
	b.until("the shell's end", `document.getElementById('terminal-status').textContent.startsWith('The shell ended')`)
	waitShellGone(t, "task.stop from the board's page", pid)
}

// TestBoardFiles: the Files tab lists the working directory, opens a
// subdirectory when asked and a file in the viewer, reports a binary
// file without its bytes, shows links and FIFOs without opening them, and
// refuses a 100 MB file with the server's message.
func TestBoardFiles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, dir := termTask(t, e, "Files task")
	for rel, body := range map[string]string{"README.md": "# Hello <b>world</b>\n", "src/app.go": "package app\n", "logo.png": "\x89PNG\x00\x00"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	_ = big.Close()
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-files")
	entry := func(path string) string { return fmt.Sprintf(`#files-tree [data-path=%q]`, path) }
	b.until("the top level", `document.querySelectorAll('#files-tree > ul > li').length === 5`)
	if got := b.str(`document.querySelector('#files-tree').innerText`); !regexp.MustCompile(`passwd\s+link \(not followed\)`).MatchString(got) {
		t.Fatalf("tree: got %q, want the link shown as a link", got)
	}
	b.click(entry("src"))
	b.until("src opened", fmt.Sprintf(`document.querySelector(%q)`, entry("src/app.go")))
	b.click(entry("src/app.go"))
	b.until("src/app.go", `(document.getElementById('file-text') || {}).textContent === 'package app\n'`)
	b.click(entry("README.md"))
	b.until("README.md as text", `(document.getElementById('file-text') || {}).textContent === '# Hello <b>world</b>\n' && !document.querySelector('#file-view b')`)
	b.shot("board-files")
	b.click(entry("logo.png"))
	b.until("the binary file reported", `document.getElementById('file-binary')`)
	b.click(entry("huge.log"))
	b.until("the big file refused", `(document.getElementById('file-error') || {}).textContent === 'path: is larger than 1 MiB, the most the file viewer shows'`)
}
