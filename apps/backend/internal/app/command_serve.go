package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// serveConfig parses kandev serve's flags (and their environment
// variables) into its configuration.
func serveConfig(args []string, std Stdio) (Config, error) {
	stderr := std.Err
	fs, dataDir := newFlags("serve", stderr)
	addr := fs.String("addr", envOr("KANDEV_ADDR", "127.0.0.1:38429"), "listen address (env KANDEV_ADDR)")
	conf := fs.Bool("conformance", false, "also serve the MCP conformance suite's fixture tools at "+ConformancePath+" (unauthenticated; loopback --addr only; for tests)")
	qwait, err := time.ParseDuration(envOr("KANDEV_QUESTION_TIMEOUT", "1h"))
	if err != nil || qwait <= 0 {
		return Config{}, errors.New("serve: KANDEV_QUESTION_TIMEOUT must be a positive duration such as 30m")
	}
	fs.DurationVar(&qwait, "question-timeout", qwait, "longest an agent's question waits for an answer (env KANDEV_QUESTION_TIMEOUT)")
	pprofAddr := fs.String("pprof", "", "also serve Go's runtime profiles at http://ADDR/debug/pprof/ (loopback only; for make bench)")
	agents := agentFlags(fs)
	term := terminalFlags(fs)
	clones := cloneFlags(fs)
	database := fs.String("database", os.Getenv("KANDEV_DATABASE_URL"),
		"postgres://… to share a PostgreSQL database with other backends (env KANDEV_DATABASE_URL; default: SQLite in the data dir)")
	ttl, err := time.ParseDuration(envOr("KANDEV_LEASE_TTL", "15s"))
	if err != nil {
		return Config{}, errors.New("serve: KANDEV_LEASE_TTL must be a duration such as 15s")
	}
	fs.DurationVar(&ttl, "lease-ttl", ttl, "with --database: how long a backend that stopped renewing its lease keeps its agents' sessions before another takes them over (env KANDEV_LEASE_TTL)")
	roots := fs.String("source-roots", os.Getenv("KANDEV_SOURCE_ROOTS"), "directories local repositories and folders may lie in, separated by "+
		string(os.PathListSeparator)+" (env KANDEV_SOURCE_ROOTS; default: your home directory)")
	maxSessions := fs.Int("mcp-max-sessions", toolserver.DefaultMaxSessions, "Streamable HTTP sessions /mcp keeps; past it the least recently used is dropped")
	sessionIdle := fs.Duration("mcp-session-idle", toolserver.DefaultSessionIdle, "an /mcp session unused this long is dropped")
	scope := fs.String("session-scope", envOr("KANDEV_SESSION_SCOPE", string(kanban.ScopeTree)),
		"tasks a task-mode agent session may change: tree (its own task, its subtasks and the tasks it created) or workspace (any task of its workspace) (env KANDEV_SESSION_SCOPE)")
	forges := fs.String("forges-file", os.Getenv("KANDEV_FORGES_FILE"), "forge accounts (per repository remote, each with token_env or token_file), "+
		"webhook secrets, the auto-merge method and poll interval, for push, pull requests and their automation (JSON; default DATA_DIR/forges.json; env KANDEV_FORGES_FILE)")
	security := securityFlags(fs)
	ops, otlp := opsFlags(fs), fs.String("otlp-endpoint", "", "export traces over OTLP/HTTP to this collector URL, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT; none: no tracing)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	bs, log, err := ops(*dataDir, *database, stderr)
	if err != nil {
		return Config{}, err
	}
	if *maxSessions <= 0 || *sessionIdle <= 0 {
		return Config{}, errors.New("serve: --mcp-max-sessions and --mcp-session-idle must be positive")
	}
	if ttl < 500*time.Millisecond || ttl > 10*time.Minute {
		return Config{}, errors.New("serve: --lease-ttl must be between 500ms and 10m")
	}
	if qwait <= 0 {
		return Config{}, errors.New("serve: --question-timeout must be positive")
	}
	ac, err := agents()
	if err != nil {
		return Config{}, err
	}
	cc, cerr := clones()
	sec, serr := security()
	if err := errors.Join(cerr, serr); err != nil {
		return Config{}, err
	}
	return Config{Security: sec, CLI: cliPath(), Addr: *addr, DataDir: *dataDir, Database: *database, Token: os.Getenv("KANDEV_TOKEN"),
		Logger: log, Out: std.Out, Conformance: *conf, QuestionWait: qwait, Agents: ac, Registry: DefaultRegistryDir(),
		Pprof: *pprofAddr, MCPSessions: toolserver.SessionLimits{Max: *maxSessions, Idle: *sessionIdle},
		LeaseTTL: ttl, LeaseBeat: ttl / 5, SourceRoots: fsguard.ParseRoots(*roots), SessionScope: kanban.SessionScope(*scope), ForgesFile: *forges, Terminal: term(), Clones: cc,
		Backup: bs, Traces: TracesConfig{Endpoint: *otlp}}, nil
}

// opsFlags adds serve's scheduled backup and log flags.
func opsFlags(fs *flag.FlagSet) func(dataDir, database string, w io.Writer) (BackupSchedule, *slog.Logger, error) {
	backups, logs := backupFlags(fs), logFlags(fs)
	return func(dataDir, database string, w io.Writer) (BackupSchedule, *slog.Logger, error) {
		bs, err := backups(dataDir, database)
		if err != nil {
			return bs, nil, err
		}
		log, err := logs(w)
		return bs, log, err
	}
}

// logFlags adds serve's log flags; the logger it returns writes to w.
func logFlags(fs *flag.FlagSet) func(w io.Writer) (*slog.Logger, error) {
	format := fs.String("log-format", envOr("KANDEV_LOG_FORMAT", "text"), "log line format: text (logfmt) or json (one JSON object a line) (env KANDEV_LOG_FORMAT)")
	level := fs.String("log-level", envOr("KANDEV_LOG_LEVEL", "info"), "lowest level logged: debug, info, warn or error (env KANDEV_LOG_LEVEL)")
	return func(w io.Writer) (*slog.Logger, error) {
		var lv slog.Level
		if err := lv.UnmarshalText([]byte(*level)); err != nil {
			return nil, errors.New("serve: --log-level must be debug, info, warn or error")
		}
		opts := &slog.HandlerOptions{Level: lv}
		switch *format {
		case "text":
			return slog.New(slog.NewTextHandler(w, opts)), nil
		case "json":
			return slog.New(slog.NewJSONHandler(w, opts)), nil
		}
		return nil, errors.New("serve: --log-format must be text or json")
	}
}

// backupFlags adds serve's scheduled backup flags.
func backupFlags(fs *flag.FlagSet) func(dataDir, database string) (BackupSchedule, error) {
	every := fs.Duration("backup-every", 0, "take a SQLite backup this often, e.g. 6h (at least 1m; default 0: no scheduled backups)")
	dir := fs.String("backup-dir", "", "directory of the scheduled backups (default DATA_DIR/backups)")
	keep := fs.Int("backup-keep", defaultKeep, "scheduled backups kept; older ones are removed")
	return func(dataDir, database string) (BackupSchedule, error) {
		s := BackupSchedule{Every: *every, Dir: *dir, Keep: *keep}
		if s.Dir == "" {
			s.Dir = filepath.Join(dataDir, "backups")
		}
		return s, s.validate(database)
	}
}

// cliPath is the path of this kandev binary, which the banner names for
// operator commands; without one (an unusual platform) it names none
// rather than a wrong one.
func cliPath() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// terminalFlags adds serve's terminal flags.
func terminalFlags(fs *flag.FlagSet) func() TerminalConfig {
	on := fs.Bool("terminal", envOr("KANDEV_TERMINAL", "true") != "false",
		"serve the operator's terminals on the task page (a shell on this machine; env KANDEV_TERMINAL; false: none)")
	shell := fs.String("terminal-shell", os.Getenv("KANDEV_TERMINAL_SHELL"),
		"absolute path of the terminals' shell (env KANDEV_TERMINAL_SHELL; default: $SHELL, else /bin/sh)")
	return func() TerminalConfig { return TerminalConfig{Off: !*on, Shell: *shell} }
}

// agentFlags adds serve's agent runtime flags.
func agentFlags(fs *flag.FlagSet) func() (AgentsConfig, error) {
	launch := fs.Bool("launch-agents", envOr("KANDEV_LAUNCH_AGENTS", "true") != "false",
		"run the agents of the sessions tasks start (env KANDEV_LAUNCH_AGENTS; false: sessions wait for agents connected by hand)")
	maxAgents := fs.Int("max-agents", 4, "agents that run at once; more sessions wait QUEUED (env KANDEV_MAX_AGENTS)")
	file := fs.String("agents-file", envOr("KANDEV_AGENTS_FILE", ""), "agents file: launch overrides and custom agent types (JSON; default DATA_DIR/agents.json; env KANDEV_AGENTS_FILE)")
	env := fs.String("agent-env", envOr("KANDEV_AGENT_ENV", ""), "comma-separated extra environment variables agents inherit (names, or prefixes ending in *; env KANDEV_AGENT_ENV)")
	start := fs.Duration("agent-start-timeout", 2*time.Minute, "longest an agent may take to answer ACP initialize and session/new")
	silence := fs.Duration("agent-silence-timeout", 30*time.Minute, "a session whose agent sends nothing this long during a turn (no question or permission open) fails")
	return func() (AgentsConfig, error) {
		if *start <= 0 || *silence <= 0 {
			return AgentsConfig{}, errors.New("serve: --agent-start-timeout and --agent-silence-timeout must be positive")
		}
		n := *maxAgents
		if v := os.Getenv("KANDEV_MAX_AGENTS"); v != "" && !flagSet(fs, "max-agents") {
			if _, err := fmt.Sscan(v, &n); err != nil {
				return AgentsConfig{}, errors.New("serve: KANDEV_MAX_AGENTS must be a number")
			}
		}
		if n < 1 || n > 256 {
			return AgentsConfig{}, errors.New("serve: --max-agents must be between 1 and 256")
		}
		return AgentsConfig{Launch: *launch, MaxAgents: n, File: *file, EnvAllow: AgentEnvAllow(*env),
			StartTimeout: *start, SilenceTimeout: *silence}, nil
	}
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// mcpConfig parses kandev mcp's flags (and their environment variables)
// into its configuration.
func mcpConfig(args []string, std Stdio) (MCPConfig, error) {
	stderr := std.Err
	fs := flag.NewFlagSet("kandev mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", envOr("KANDEV_BACKEND", "http://127.0.0.1:38429"), "backend base URL (env KANDEV_BACKEND)")
	session := fs.String("session", "", "session id (required)")
	tokenFile := fs.String("token-file", "", "file holding the session token (default: env KANDEV_SESSION_TOKEN)")
	listen := fs.String("listen", "", "serve Streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of stdio")
	if err := fs.Parse(args); err != nil {
		return MCPConfig{}, err
	}
	if *session == "" {
		return MCPConfig{}, errors.New("mcp: --session is required")
	}
	tok := os.Getenv("KANDEV_SESSION_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return MCPConfig{}, fmt.Errorf("mcp: read --token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	progress, err := envDuration("KANDEV_PROGRESS_INTERVAL", "20s")
	if err != nil {
		return MCPConfig{}, err
	}
	report, err := envDuration("KANDEV_REPORT_INTERVAL", "10s")
	if err != nil {
		return MCPConfig{}, err
	}
	// stdout carries the MCP protocol: logs go to stderr only.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ready := func(addr string) {
		if addr != "" {
			_, _ = fmt.Fprintf(stderr, "kandev mcp serving on http://%s/mcp\n", addr)
		}
	}
	return MCPConfig{BackendURL: *backend, SessionID: *session, Token: tok, Listen: *listen,
		Logger: log, Stdin: std.In, Stdout: std.Out, Ready: ready, ProgressInterval: progress,
		ReportInterval: report}, nil
}

// envDuration is the positive duration in the environment variable name
// (0 when unset).
func envDuration(name, example string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("mcp: %s must be a positive duration such as %s", name, example)
	}
	return d, nil
}
