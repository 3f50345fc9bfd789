// Command kandev is the Kandev backend, its per-session MCP server and the
// operator CLI. It parses flags and calls into internal/app; nothing else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/app"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

const usage = `usage: kandev <command> [flags]

commands:
  serve                         run the backend (HTTP, WebSocket, external MCP)
  mcp --session ID              serve one agent session's MCP tools (stdio, or --listen)
  tools [--mode M] [--json|--markdown]
  tools describe NAME [--mode M]
  mode set --session ID --mode M
  session create (--task ID | --title T) [--mode M]
  session token --session ID
  session start --task ID [--agent-profile P] [--executor-profile E] [--prompt TEXT]
  session stop --session ID [--reason TEXT]
  session message --session ID --message TEXT [--interrupt]
  agent mock                    run the built-in mock ACP agent on stdio (for demos and tests)
  session upstreams --session ID  proxied MCP servers and the tools they refused
  db migrate --database URL     apply pending migrations (postgres://… or sqlite:PATH)
  db copy --from sqlite:PATH --to postgres://…   copy a solo board into an empty PostgreSQL database
  token [--backend URL]         print the operator token (of the backend running at URL)
  version
Run "kandev <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kandev:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		_, _ = io.WriteString(stderr, usage)
		return errors.New("no command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, stdout, stderr)
	case "mcp":
		return mcpCmd(ctx, rest, stderr)
	case "tools":
		return tools(rest, stdout, stderr)
	case "mode":
		return modeCmd(ctx, rest, stdout, stderr)
	case "session":
		return sessionCmd(ctx, rest, stdout, stderr)
	case "agent":
		return agentCmd(ctx, rest, stderr)
	case "db":
		return dbCmd(ctx, rest, stdout, stderr)
	case "token":
		fs, creds := operatorFlags("token", stderr)
		if err := fs.Parse(rest); err != nil {
			return err
		}
		_, tok, err := creds()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, tok)
		return err
	case "version":
		_, err := fmt.Fprintln(stdout, "kandev", toolserver.Version)
		return err
	case "-h", "--help", "help":
		_, _ = io.WriteString(stdout, usage)
		return nil
	}
	_, _ = io.WriteString(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// newFlags returns a flag set with --data-dir.
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("kandev "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, fs.String("data-dir", envOr("KANDEV_DATA_DIR", "./.kandev"), "data directory (env KANDEV_DATA_DIR)")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("serve", stderr)
	addr := fs.String("addr", envOr("KANDEV_ADDR", "127.0.0.1:38429"), "listen address (env KANDEV_ADDR)")
	conf := fs.Bool("conformance", false, "also serve the MCP conformance suite's fixture tools at "+app.ConformancePath+" (unauthenticated; loopback --addr only; for tests)")
	qwait, err := time.ParseDuration(envOr("KANDEV_QUESTION_TIMEOUT", "1h"))
	if err != nil || qwait <= 0 {
		return errors.New("serve: KANDEV_QUESTION_TIMEOUT must be a positive duration such as 30m")
	}
	fs.DurationVar(&qwait, "question-timeout", qwait, "longest an agent's question waits for an answer (env KANDEV_QUESTION_TIMEOUT)")
	pprofAddr := fs.String("pprof", "", "also serve Go's runtime profiles at http://ADDR/debug/pprof/ (loopback only; for make bench)")
	agents := agentFlags(fs)
	database := fs.String("database", os.Getenv("KANDEV_DATABASE_URL"),
		"postgres://… to share a PostgreSQL database with other backends (env KANDEV_DATABASE_URL; default: SQLite in the data dir)")
	ttl, err := time.ParseDuration(envOr("KANDEV_LEASE_TTL", "15s"))
	if err != nil {
		return errors.New("serve: KANDEV_LEASE_TTL must be a duration such as 15s")
	}
	fs.DurationVar(&ttl, "lease-ttl", ttl, "with --database: how long a backend that stopped renewing its lease keeps its agents' sessions before another takes them over (env KANDEV_LEASE_TTL)")
	roots := fs.String("source-roots", os.Getenv("KANDEV_SOURCE_ROOTS"), "directories local repositories and folders may lie in, separated by "+
		string(os.PathListSeparator)+" (env KANDEV_SOURCE_ROOTS; default: your home directory)")
	maxSessions := fs.Int("mcp-max-sessions", toolserver.DefaultMaxSessions, "Streamable HTTP sessions /mcp keeps; past it the least recently used is dropped")
	sessionIdle := fs.Duration("mcp-session-idle", toolserver.DefaultSessionIdle, "an /mcp session unused this long is dropped")
	scope := fs.String("session-scope", envOr("KANDEV_SESSION_SCOPE", string(kanban.ScopeTree)),
		"tasks a task-mode agent session may change: tree (its own task, its subtasks and the tasks it created) or workspace (any task of its workspace) (env KANDEV_SESSION_SCOPE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *maxSessions <= 0 || *sessionIdle <= 0 {
		return errors.New("serve: --mcp-max-sessions and --mcp-session-idle must be positive")
	}
	if ttl < 500*time.Millisecond || ttl > 10*time.Minute {
		return errors.New("serve: --lease-ttl must be between 500ms and 10m")
	}
	if qwait <= 0 {
		return errors.New("serve: --question-timeout must be positive")
	}
	ac, err := agents()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	return app.Run(ctx, app.Config{Addr: *addr, DataDir: *dataDir, Database: *database, Token: os.Getenv("KANDEV_TOKEN"),
		Logger: log, Out: stdout, Conformance: *conf, QuestionWait: qwait, Agents: ac, Registry: app.DefaultRegistryDir(),
		Pprof: *pprofAddr, MCPSessions: toolserver.SessionLimits{Max: *maxSessions, Idle: *sessionIdle},
		LeaseTTL: ttl, LeaseBeat: ttl / 5, SourceRoots: fsguard.ParseRoots(*roots), SessionScope: kanban.SessionScope(*scope)})
}

// agentFlags adds serve's agent runtime flags.
func agentFlags(fs *flag.FlagSet) func() (app.AgentsConfig, error) {
	launch := fs.Bool("launch-agents", envOr("KANDEV_LAUNCH_AGENTS", "true") != "false",
		"run the agents of the sessions tasks start (env KANDEV_LAUNCH_AGENTS; false: sessions wait for agents connected by hand)")
	maxAgents := fs.Int("max-agents", 4, "agents that run at once; more sessions wait QUEUED (env KANDEV_MAX_AGENTS)")
	file := fs.String("agents-file", envOr("KANDEV_AGENTS_FILE", ""), "agent launch command overrides (JSON; default DATA_DIR/agents.json; env KANDEV_AGENTS_FILE)")
	env := fs.String("agent-env", envOr("KANDEV_AGENT_ENV", ""), "comma-separated extra environment variables agents inherit (names, or prefixes ending in *; env KANDEV_AGENT_ENV)")
	start := fs.Duration("agent-start-timeout", 2*time.Minute, "longest an agent may take to answer ACP initialize and session/new")
	silence := fs.Duration("agent-silence-timeout", 30*time.Minute, "a session whose agent sends nothing this long during a turn (no question or permission open) fails")
	return func() (app.AgentsConfig, error) {
		if *start <= 0 || *silence <= 0 {
			return app.AgentsConfig{}, errors.New("serve: --agent-start-timeout and --agent-silence-timeout must be positive")
		}
		n := *maxAgents
		if v := os.Getenv("KANDEV_MAX_AGENTS"); v != "" && !flagSet(fs, "max-agents") {
			if _, err := fmt.Sscan(v, &n); err != nil {
				return app.AgentsConfig{}, errors.New("serve: KANDEV_MAX_AGENTS must be a number")
			}
		}
		if n < 1 || n > 256 {
			return app.AgentsConfig{}, errors.New("serve: --max-agents must be between 1 and 256")
		}
		return app.AgentsConfig{Launch: *launch, MaxAgents: n, File: *file, EnvAllow: app.AgentEnvAllow(*env),
			StartTimeout: *start, SilenceTimeout: *silence}, nil
	}
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func dbCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const use = "usage: kandev db migrate --database URL | kandev db copy --from sqlite:PATH --to postgres://…"
	if len(args) == 0 {
		return errors.New(use)
	}
	fs := flag.NewFlagSet("kandev db "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch args[0] {
	case "migrate":
		database := fs.String("database", os.Getenv("KANDEV_DATABASE_URL"), "postgres://… or sqlite:PATH (env KANDEV_DATABASE_URL)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *database == "" {
			return errors.New("db migrate: --database is required")
		}
		return app.DBMigrate(ctx, stdout, *database)
	case "copy":
		from := fs.String("from", "", "the solo board: sqlite:PATH (its data dir or kandev.db)")
		to := fs.String("to", "", "an empty PostgreSQL database: postgres://…")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *from == "" || *to == "" {
			return errors.New("db copy: --from and --to are required")
		}
		return app.DBCopy(ctx, stdout, *from, *to)
	}
	return errors.New(use)
}

func agentCmd(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "mock" {
		return errors.New("usage: kandev agent mock")
	}
	fs := flag.NewFlagSet("kandev agent mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o app.MockAgentOptions
	fs.BoolVar(&o.NoLoad, "no-load", false, "do not offer ACP session/load (to test clients that must cope without it)")
	fs.BoolVar(&o.NoModes, "no-modes", false, "offer no ACP session modes (to test clients that must cope without them)")
	fs.DurationVar(&o.ShTimeout, "sh-timeout", app.DefaultMockShTimeout, "how long one @sh command may run before its process group is killed")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	return app.RunMockAgent(ctx, os.Stdin, os.Stdout, stderr, o)
}

func mcpCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kandev mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", envOr("KANDEV_BACKEND", "http://127.0.0.1:38429"), "backend base URL (env KANDEV_BACKEND)")
	session := fs.String("session", "", "session id (required)")
	tokenFile := fs.String("token-file", "", "file holding the session token (default: env KANDEV_SESSION_TOKEN)")
	listen := fs.String("listen", "", "serve Streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of stdio")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *session == "" {
		return errors.New("mcp: --session is required")
	}
	tok := os.Getenv("KANDEV_SESSION_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("mcp: read --token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if v := os.Getenv("KANDEV_PROGRESS_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("mcp: KANDEV_PROGRESS_INTERVAL must be a positive duration such as 20s")
		}
		catalog.SetQuestionKeepAlive(d)
	}
	// stdout carries the MCP protocol: logs go to stderr only.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ready := func(addr string) {
		if addr != "" {
			_, _ = fmt.Fprintf(stderr, "kandev mcp serving on http://%s/mcp\n", addr)
		}
	}
	return app.RunMCP(ctx, app.MCPConfig{BackendURL: *backend, SessionID: *session, Token: tok, Listen: *listen,
		Logger: log, Stdin: os.Stdin, Stdout: os.Stdout, Ready: ready})
}

func tools(args []string, stdout, stderr io.Writer) error {
	o := app.ToolsOptions{}
	if len(args) > 0 && args[0] == "describe" {
		if len(args) < 2 {
			return errors.New("tools describe: a tool name is required")
		}
		o.Describe, args = args[1], args[2:]
	}
	fs := flag.NewFlagSet("kandev tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "task", "mode: task, task-title-pending, config, external, office")
	fs.BoolVar(&o.JSON, "json", false, "print the tools/list tools array as JSON")
	fs.BoolVar(&o.Markdown, "markdown", false, "print the generated tool reference (all modes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Mode = kanban.Mode(*mode)
	return app.Tools(stdout, o)
}

// operatorFlags adds --backend and --data-dir; the returned function gives
// the backend URL and the operator token (app.FindOperatorToken).
func operatorFlags(name string, stderr io.Writer) (*flag.FlagSet, func() (string, string, error)) {
	fs, dataDir := newFlags(name, stderr)
	backend := fs.String("backend", envOr("KANDEV_BACKEND", "http://127.0.0.1:38429"), "backend base URL (env KANDEV_BACKEND)")
	return fs, func() (string, string, error) {
		set := os.Getenv("KANDEV_DATA_DIR") != ""
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "data-dir" })
		tok, err := app.FindOperatorToken(app.TokenLookup{Env: os.Getenv("KANDEV_TOKEN"), BackendURL: *backend,
			DataDir: *dataDir, DataDirSet: set, Registry: app.DefaultRegistryDir()})
		return *backend, tok, err
	}
}

func modeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "set" {
		return errors.New("usage: kandev mode set --session ID --mode MODE")
	}
	fs, creds := operatorFlags("mode set", stderr)
	session := fs.String("session", "", "session id (required)")
	mode := fs.String("mode", "", "new mode: task, task-title-pending, config, office (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	var out kanban.Session
	if err := app.Operator(ctx, backend, tok, kanban.ActionSessionSetMode, action.SetModeIn{ID: *session, Mode: kanban.Mode(*mode)}, &out); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "session %s mode %s\n", out.ID, out.MCPMode)
	return err
}

const sessionUsage = "usage: kandev session create|token|upstreams|start|stop|message [flags] (kandev session SUBCOMMAND -h)"

func sessionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(sessionUsage)
	}
	sub := args[0]
	switch sub {
	case "create", "token", "upstreams":
	case "start", "stop", "message":
		return sessionControl(ctx, sub, args[1:], stdout, stderr)
	default:
		return errors.New(sessionUsage)
	}
	fs, creds := operatorFlags("session "+sub, stderr)
	task := fs.String("task", "", "task id (create)")
	title := fs.String("title", "", "create a new task with this title for the session (create, instead of --task)")
	mode := fs.String("mode", "task", "MCP mode (create)")
	session := fs.String("session", "", "session id (token, upstreams)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	if sub == "create" {
		out, err := app.SessionCreate(ctx, backend, tok, *task, *title, kanban.Mode(*mode))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "task_id=%s\nsession_id=%s\ntoken=%s\n", out.Session.TaskID, out.Session.ID, out.Token)
		return err
	}
	if sub == "upstreams" {
		return app.SessionUpstreams(ctx, backend, tok, *session, stdout)
	}
	var out action.TokenOut
	if err := app.Operator(ctx, backend, tok, kanban.ActionSessionToken, action.IDIn{ID: *session}, &out); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, out.Token)
	return err
}

// sessionControl runs kandev session start|stop|message.
func sessionControl(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	fs, creds := operatorFlags("session "+sub, stderr)
	var c app.SessionControl
	fs.StringVar(&c.TaskID, "task", "", "task to start an agent on (start)")
	fs.StringVar(&c.SessionID, "session", "", "session to stop or message (stop, message)")
	fs.StringVar(&c.AgentProfileID, "agent-profile", "", "agent profile (start; default: the default profile)")
	fs.StringVar(&c.ExecutorProfileID, "executor-profile", "", "executor profile (start; default: the default profile)")
	fs.StringVar(&c.Text, "prompt", "", "first prompt (start; default: the task's prompt)")
	fs.StringVar(&c.Reason, "reason", "", "why, recorded in the conversation (stop)")
	fs.StringVar(&c.Message, "message", "", "the prompt to deliver (message)")
	fs.BoolVar(&c.Interrupt, "interrupt", false, "cancel the agent's current turn and deliver at once (message)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	line, err := app.ControlSession(ctx, backend, tok, sub, c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, line)
	return err
}
