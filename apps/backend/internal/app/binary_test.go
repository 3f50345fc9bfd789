package app

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// kandevBinary builds cmd/kandev once per test run.
func kandevBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kandev-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kandev")
		// Static (no cgo), as make build makes it: the Docker executor
		// mounts it into containers that may hold nothing else.
		cmd := exec.Command("go", "build", "-o", binPath, "../../cmd/kandev")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build kandev: %v: %s", buildErr, binPath)
	}
	return binPath
}

// TestStdioSessionEndToEnd drives the real `kandev mcp` binary over stdio
// with mcp-go's client: attach, list, call, and a mode switch that yields
// exactly one notifications/tools/list_changed.
func TestStdioSessionEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := kandevBinary(t)
	task := e.newTask("Stdio task")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	c, err := client.NewStdioMCPClient(bin, []string{"KANDEV_SESSION_TOKEN=" + created.Token}, "mcp", "--backend", e.url, "--session", created.Session.ID)
	if err != nil {
		t.Fatalf("start kandev mcp: %v", err)
	}
	var changed atomic.Int32
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			changed.Add(1)
		}
	})
	e.initialize(c)
	waitFor(t, func() bool {
		var s kanban.Session
		e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: created.Session.ID}, &s)
		return s.MCPAttached && s.State == kanban.SessionRunning
	})
	names := toolNames(t, c)
	if !names["create_task_kandev"] || names["create_workflow_kandev"] {
		t.Fatalf("task mode tools: got %v", names)
	}
	var page struct {
		Items []kanban.Task `json:"items"`
	}
	e.decode(e.call(c, "list_tasks_kandev", `{"limit":10}`), &page)
	if len(page.Items) != 1 || page.Items[0].ID != task.ID {
		t.Fatalf("got %+v, want the one task", page.Items)
	}
	if res := e.call(c, "list_tasks_kandev", `{"limit":0}`); !res.IsError || text(res) != "invalid arguments for list_tasks_kandev: /limit: must be >= 1 (minimum)" {
		t.Fatalf("got %q, want the limit error", text(res))
	}
	if _, err := e.b.svc.SetMode(context.Background(), created.Session.ID, kanban.ModeConfig); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return changed.Load() >= 1 })
	names = toolNames(t, c)
	if names["create_task_kandev"] || !names["list_tasks_kandev"] {
		t.Fatalf("config mode tools: got %v", names)
	}
	if _, err := callErr(c, "create_task_kandev", `{"title":"x"}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("got %v, want unknown tool", err)
	}
	if got := changed.Load(); got != 1 {
		t.Fatalf("got %d list_changed notifications, want exactly 1", got)
	}
	_ = c.Close()
	waitFor(t, func() bool {
		var s kanban.Session
		e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: created.Session.ID}, &s)
		return !s.MCPAttached
	})
}

// TestListenSessionEndToEnd drives `kandev mcp --listen` over Streamable HTTP.
func TestListenSessionEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := kandevBinary(t)
	task := e.newTask("HTTP task")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--backend", e.url, "--session", created.Session.ID, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "KANDEV_SESSION_TOKEN="+created.Token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	url := readAddr(t, stderr, regexp.MustCompile(`serving on (http://\S+/mcp)`))
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	e.initialize(c)
	var page struct {
		Items []kanban.Task `json:"items"`
	}
	e.decode(e.call(c, "list_tasks_kandev", `{}`), &page)
	if len(page.Items) != 1 {
		t.Fatalf("got %d tasks, want 1", len(page.Items))
	}
}

// readAddr reads lines until re matches (bounded by the test's 10 s wait).
func readAddr(t *testing.T, r io.Reader, re *regexp.Regexp) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case a := <-found:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("no address printed within 10s")
	}
	return ""
}

func toolNames(t *testing.T, c *client.Client) map[string]bool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]bool{}
	for _, tl := range res.Tools {
		out[tl.Name] = true
	}
	return out
}
