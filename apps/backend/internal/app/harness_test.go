package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// env is a real backend (SQLite in a temp dir, WebSocket API, external
// /mcp) on 127.0.0.1:0, for end-to-end tests through real MCP clients.
type env struct {
	t     *testing.T
	b     *backend
	url   string
	token string
	logs  *syncBuffer
	cfg   Config
	// progress is the keep-alive interval of the session MCP servers
	// sessionMCP starts (0: the default).
	progress time.Duration
	// close shuts the backend down as kandev serve does (once).
	close func()
}

// syncBuffer captures logs for canary checks.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newEnv(t *testing.T) *env { return newEnvWith(t) }

// newEnvWith is newEnv with its configuration adjusted by opts (before the
// backend opens its data dir).
func newEnvWith(t *testing.T, opts ...func(*Config)) *env {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Tests register repositories and folders in their temp dirs: the temp
	// base is the one source root (the data dir in it stays out).
	cfg := Config{DataDir: t.TempDir(), Token: "operator-test-token", Logger: log, QuestionWait: 30 * time.Second,
		SourceRoots: []string{os.TempDir()}}
	for _, o := range opts {
		o(&cfg)
	}
	// The backend starts as kandev serve starts it (start), and stops as
	// it stops (its lifetime's close).
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	b, err := start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	e := &env{t: t, b: b, url: "http://" + b.addr, token: "operator-test-token", logs: logs, cfg: cfg}
	var once sync.Once
	e.close = func() {
		once.Do(func() {
			if err := b.life.close(20 * time.Second); err != nil {
				t.Errorf("stop the backend: %v", err)
			}
		})
	}
	t.Cleanup(e.close)
	return e
}

// operatorMCP connects a real mcp-go Streamable HTTP client to /mcp.
func (e *env) operatorMCP() *client.Client {
	e.t.Helper()
	c, err := client.NewStreamableHttpClient(e.url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + e.token}))
	if err != nil {
		e.t.Fatalf("client: %v", err)
	}
	e.initialize(c)
	return c
}

func (e *env) initialize(c *client.Client) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Start with a context that outlives initialize: the SSE transport ties
	// its stream to it.
	if err := c.Start(context.Background()); err != nil {
		e.t.Fatalf("start: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "kandev-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
}

// session is an agent session with its MCP server attached over the
// WebSocket API, and an in-process MCP client talking to that server.
type session struct {
	ID, TaskID, WorkspaceID, Token string
	MCP                            *SessionMCP
	Client                         *client.Client
}

// newTask creates a task as the operator (no agent session).
func (e *env) newTask(title string) *kanban.Task {
	e.t.Helper()
	var out action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: title, StartAgent: &f}, &out)
	return out.Task
}

// workspaceID returns the seeded default workspace's id.
func (e *env) workspaceID() string {
	e.t.Helper()
	var wss kanban.List[kanban.Workspace]
	e.dispatch(kanban.ActionWorkspaceList, action.ListIn{}, &wss)
	return wss.Items[0].ID
}

// sessionMCP creates a task (unless taskID is set) and a session in mode,
// starts the session's MCP server through the WebSocket API and connects
// an in-process MCP client to it.
func (e *env) sessionMCP(mode kanban.Mode, taskID string) *session {
	e.t.Helper()
	if taskID == "" {
		taskID = e.newTask("Session task").ID
	}
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: taskID, Mode: mode}, &created)
	m, err := StartSessionMCP(context.Background(), MCPConfig{BackendURL: e.url, SessionID: created.Session.ID, Token: created.Token,
		Logger: slog.New(slog.NewTextHandler(e.logs, nil)), ProgressInterval: e.progress})
	if err != nil {
		e.t.Fatalf("start session MCP: %v", err)
	}
	e.t.Cleanup(m.Close)
	c, err := client.NewInProcessClient(m.Server().MCP())
	if err != nil {
		e.t.Fatalf("in-process client: %v", err)
	}
	e.initialize(c)
	return &session{ID: created.Session.ID, TaskID: taskID, WorkspaceID: created.Session.WorkspaceID, Token: created.Token, MCP: m, Client: c}
}

// dispatch runs an action as the operator, failing the test on error.
func (e *env) dispatch(name kanban.Action, payload, out any) {
	e.t.Helper()
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, name, payload, out); err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
}

// tryDispatch runs an action as p the way a WebSocket request runs it:
// the payload's contract (its tool's compiled check) applies.
func (e *env) tryDispatch(p action.Principal, name kanban.Action, payload, out any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	res, err := e.b.reg.Dispatch(context.Background(), p, name, raw)
	if err != nil || out == nil {
		return err
	}
	rb, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(rb, out)
}

// mcpCaller is an initialized MCP client.
type mcpCaller = *client.Client

// call calls a tool with raw JSON arguments ("" omits them).
func (e *env) call(c *client.Client, tool, args string) *mcp.CallToolResult {
	e.t.Helper()
	res, err := callErr(c, tool, args)
	if err != nil {
		e.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// text returns a result's text content.
func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decode unmarshals a successful result's JSON text into v.
func (e *env) decode(r *mcp.CallToolResult, v any) {
	e.t.Helper()
	if r.IsError {
		e.t.Fatalf("tool error: %s", text(r))
	}
	if err := json.Unmarshal([]byte(text(r)), v); err != nil {
		e.t.Fatalf("decode result: %v", err)
	}
}

// counts returns the row count of every table: compare before and after a
// refused call to prove it changed nothing.
func (e *env) counts() map[string]int {
	e.t.Helper()
	db := e.b.store.DB()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		e.t.Fatalf("tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			e.t.Fatalf("scan: %v", err)
		}
		tables = append(tables, n)
	}
	_ = rows.Close()
	out := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + tb + `"`).Scan(&n); err != nil {
			e.t.Fatalf("count %s: %v", tb, err)
		}
		out[tb] = n
	}
	return out
}

// fingerprint returns every row of every table as text: equal
// fingerprints before and after a refused call prove it changed nothing.
func (e *env) fingerprint() string {
	e.t.Helper()
	// The engine reacts to earlier calls in the background (a move's
	// automations): wait for it, so the dump holds only what a call did.
	e.settleFlow()
	db := e.b.store.DB()
	var b strings.Builder
	for _, tb := range slices.Sorted(maps.Keys(e.counts())) {
		rows, err := db.Query(`SELECT * FROM "` + tb + `" ORDER BY rowid`)
		if err != nil {
			rows, err = db.Query(`SELECT * FROM "` + tb + `"`)
		}
		if err != nil {
			e.t.Fatalf("dump %s: %v", tb, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			e.t.Fatalf("dump %s: %v", tb, err)
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				e.t.Fatalf("dump %s: %v", tb, err)
			}
			fmt.Fprintf(&b, "%s%v\n", tb, vals)
		}
		_ = rows.Close()
	}
	return b.String()
}

func mcpListReq() mcp.ListToolsRequest { return mcp.ListToolsRequest{} }

// callErr calls a tool and returns the protocol error, if any.
func callErr(c *client.Client, tool, args string) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if args != "" {
		req.Params.Arguments = json.RawMessage(args)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.CallTool(ctx, req)
}

// waitFor polls cond for up to 10 s (a bounded wait, not a timing assertion).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ptr returns a pointer to v (optional payload fields).
func ptr[T any](v T) *T { return &v }

// writeGuard checks that a run of refused calls changes nothing without
// dumping the database after each one: after a call, when the store's
// counter of committed writes has not moved, nothing was written; when
// it has (the call, or a background sweep committing a write that
// changed no row), the database's fingerprint must still be the one at
// the start. finish compares the fingerprints once more at the end, so a
// write that bypassed the counter is caught too.
type writeGuard struct {
	e      *env
	base   string
	writes int64
}

// guardWrites starts a guard at the database's current state.
func (e *env) guardWrites() *writeGuard {
	e.t.Helper()
	g := &writeGuard{e: e, base: e.fingerprint()}
	_, g.writes = e.b.store.WriteStats()
	return g
}

// unchanged fails the test if the call named name changed the database.
func (g *writeGuard) unchanged(name string) {
	g.e.t.Helper()
	g.e.settleFlow()
	_, w := g.e.b.store.WriteStats()
	if w == g.writes {
		return
	}
	g.writes = w
	if g.e.fingerprint() != g.base {
		g.e.t.Errorf("%s: the refused call changed the database", name)
	}
}

// finish fails the test if the database is not as it was at the start.
func (g *writeGuard) finish(what string) {
	g.e.t.Helper()
	if g.e.fingerprint() != g.base {
		g.e.t.Errorf("%s: the refused calls changed the database", what)
	}
}
