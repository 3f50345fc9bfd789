package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The kandev command line: each command parses its flags (and their
// environment variables) into its configuration and runs it.

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
  changes summary|list|diff|commits --task ID [--repository ID] [--path P]
                                a task's changed files, one file's diff, the task branch's commits
  review comment --task ID --path P --line N[-M] [--side old] --body TEXT
  review list --task ID [--state S] | review resolve --comment ID | review send --task ID
                                comments on a task's diff, delivered to its agent as one prompt
  files list|read --task ID [--path P]
                                a task's working directory, read-only
  session upstreams --session ID  proxied MCP servers and the tools they refused
  usage --session ID | --task ID | --workspace ID
                                tokens and cost agents reported (JSON)
  audit export [--actor A] [--action NAME] [--target ID] [--since T] [--until T]
                                the audit log, newest first, as JSON lines
  secret rotate-key --old-key-file F --new-key-file F [--data-dir DIR | --database URL]
                                re-encrypt every named secret with a new key (backends stopped)
  db migrate --database URL     apply pending migrations (postgres://… or sqlite:PATH)
  db copy --from sqlite:PATH --to postgres://…   copy a solo board into an empty PostgreSQL database
  backup --out FILE [--data-dir DIR]   a checked copy of the SQLite database (also while serving)
  restore --from FILE [--data-dir DIR] a backup into a new or empty data dir
  token [--backend URL]         print the operator token (of the backend running at URL)
  version [--data-dir DIR | --database URL]   the binary's and the database's schema versions
  healthcheck [--addr HOST:PORT] exit 0 when the backend at HOST:PORT answers /healthz (container HEALTHCHECK)
  doctor [--data-dir DIR] [--database URL]    check git, agents, executors, the database, disk and clocks
Run "kandev <command> -h" for a command's flags.
`

// Stdio is the standard streams a command reads and writes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs the kandev command named by args[0] with the rest of args as
// its flags, until it ends or ctx does (a signal). An error is the
// command's failure, already explained; flag.ErrHelp follows -h.
func Main(ctx context.Context, args []string, std Stdio) error {
	stdout, stderr := std.Out, std.Err
	if len(args) == 0 {
		_, _ = io.WriteString(stderr, usage)
		return errors.New("no command")
	}
	cmd, rest := args[0], args[1:]
	if run, ok := commands[cmd]; ok {
		return run(ctx, rest, stdout, stderr)
	}
	switch cmd {
	case "serve":
		cfg, err := serveConfig(rest, std)
		if err != nil {
			return err
		}
		return Run(ctx, cfg)
	case "mcp":
		cfg, err := mcpConfig(rest, std)
		if err != nil {
			return err
		}
		return RunMCP(ctx, cfg)
	case "agent":
		return agentCmd(ctx, rest, std)
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
	case "-h", "--help", "help":
		_, _ = io.WriteString(stdout, usage)
		return nil
	}
	_, _ = io.WriteString(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// commands are the commands that take their flags and the two output
// streams (Main runs the others itself).
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"tools": toolsCmd, "mode": modeCmd, "session": sessionCmd, "changes": changesCmd, "review": reviewCmd,
	"files": filesCmd, "usage": usageCmd, "db": dbCmd, "version": versionCmd, "healthcheck": healthcheckCmd,
	"backup": backupCmd, "restore": restoreCmd, "doctor": doctorCmd, "audit": auditCmd,
	"secret": secretCmd,
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
		return DBMigrate(ctx, stdout, *database)
	case "copy":
		from := fs.String("from", "", "the solo board: sqlite:PATH (its data dir or kandev.db)")
		to := fs.String("to", "", "an empty PostgreSQL database: postgres://…")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *from == "" || *to == "" {
			return errors.New("db copy: --from and --to are required")
		}
		return DBCopy(ctx, stdout, *from, *to)
	}
	return errors.New(use)
}

func agentCmd(ctx context.Context, args []string, std Stdio) error {
	stderr := std.Err
	if len(args) == 1 && args[0] == "hold" {
		<-ctx.Done() // the first process of a Docker executor's container: it waits to be stopped
		return nil
	}
	if len(args) == 0 || args[0] != "mock" {
		return errors.New("usage: kandev agent mock | kandev agent hold")
	}
	fs := flag.NewFlagSet("kandev agent mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o MockAgentOptions
	fs.BoolVar(&o.NoLoad, "no-load", false, "do not offer ACP session/load (to test clients that must cope without it)")
	fs.BoolVar(&o.NoModes, "no-modes", false, "offer no ACP session modes (to test clients that must cope without them)")
	fs.DurationVar(&o.ShTimeout, "sh-timeout", DefaultMockShTimeout, "how long one @sh command may run before its process group is killed")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	return RunMockAgent(ctx, std.In, std.Out, stderr, o)
}

func toolsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := ToolsOptions{}
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
	return Tools(ctx, stdout, o)
}

// operatorFlags adds --backend and --data-dir; the returned function gives
// the backend URL and the operator token (FindOperatorToken).
func operatorFlags(name string, stderr io.Writer) (*flag.FlagSet, func() (string, string, error)) {
	fs, dataDir := newFlags(name, stderr)
	backend := fs.String("backend", envOr("KANDEV_BACKEND", "http://127.0.0.1:38429"), "backend base URL (env KANDEV_BACKEND)")
	return fs, func() (string, string, error) {
		set := os.Getenv("KANDEV_DATA_DIR") != ""
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "data-dir" })
		tok, err := FindOperatorToken(TokenLookup{Env: os.Getenv("KANDEV_TOKEN"), BackendURL: *backend,
			DataDir: *dataDir, DataDirSet: set, Registry: DefaultRegistryDir()})
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
	if err := Operator(ctx, backend, tok, kanban.ActionSessionSetMode, action.SetModeIn{ID: *session, Mode: kanban.Mode(*mode)}, &out); err != nil {
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
		out, err := SessionCreate(ctx, backend, tok, *task, *title, kanban.Mode(*mode))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "task_id=%s\nsession_id=%s\ntoken=%s\n", out.Session.TaskID, out.Session.ID, out.Token)
		return err
	}
	if sub == "upstreams" {
		return SessionUpstreams(ctx, backend, tok, *session, stdout)
	}
	var out action.TokenOut
	if err := Operator(ctx, backend, tok, kanban.ActionSessionToken, action.IDIn{ID: *session}, &out); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, out.Token)
	return err
}

// sessionControl runs kandev session start|stop|message.
func sessionControl(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) error {
	fs, creds := operatorFlags("session "+sub, stderr)
	var c SessionControl
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
	line, err := ControlSession(ctx, backend, tok, sub, c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, line)
	return err
}
