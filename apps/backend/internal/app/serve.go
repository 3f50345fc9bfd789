package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/board"
	"github.com/kandev/kandev/apps/backend/internal/flow"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/logring"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/conformance"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/metrics"
	"github.com/kandev/kandev/apps/backend/internal/notify"
	"github.com/kandev/kandev/apps/backend/internal/prwatch"
	"github.com/kandev/kandev/apps/backend/internal/ratelimit"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/terminal"
	"github.com/kandev/kandev/apps/backend/internal/tracing"
	"github.com/kandev/kandev/apps/backend/internal/vault"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// Config configures `kandev serve`.
type Config struct {
	Addr    string // listen address, e.g. 127.0.0.1:38429 (port 0 picks one)
	DataDir string
	// Database, when set, is the postgres:// URL of a PostgreSQL database
	// shared with other backends; empty keeps SQLite in DataDir.
	Database string
	// Token is the operator token from KANDEV_TOKEN; empty means the data
	// dir's token file (created on first start).
	Token  string
	Logger *slog.Logger
	// QuestionWait bounds how long ask_user_question waits (default 10m).
	QuestionWait time.Duration
	// Ready, if set, is called with the bound address once serving.
	Ready func(addr string)
	// Out receives the start-up banner (default stdout).
	Out io.Writer
	// Conformance mounts the MCP conformance suite's fixture server at
	// ConformancePath (unauthenticated; refused unless Addr is loopback).
	Conformance bool
	// Agents configures the agent runtime.
	Agents AgentsConfig
	// Terminal configures the operator's terminals.
	Terminal TerminalConfig
	// ArchiveSweep is how often tasks due for auto-archive are archived
	// (default 1 minute); Clock is the time it compares with (time.Now).
	ArchiveSweep time.Duration
	Clock        func() time.Time
	// RoutineTick is how often due routines are looked for (default 10s).
	RoutineTick time.Duration
	// Registry, when set, is the directory where the running backend
	// records where its operator token is, for operator commands started
	// elsewhere (DefaultRegistryDir; see registry.go).
	Registry string
	// LeaseBeat and LeaseTTL, with Database, are how often this backend
	// renews its lease and how long a lease lasts unrenewed (defaults 3s
	// and 15s): the sessions of a backend whose lease lapsed are taken
	// over by another.
	LeaseBeat, LeaseTTL time.Duration
	// Pprof, when set, is a loopback address on which Go's runtime
	// profiles are served (see pprof.go); empty serves none.
	Pprof string
	// MCPSessions bound the /mcp endpoint's Streamable HTTP sessions.
	MCPSessions toolserver.SessionLimits
	// SourceRoots are the directories local repositories and folders may
	// lie in (--source-roots): absolute, existing, no system directory.
	// Empty: the operator's home directory (see sourcePolicy).
	SourceRoots []string
	// SessionScope is how far a task session's writes reach: tree (the
	// default when empty) or workspace (--session-scope).
	SessionScope kanban.SessionScope
	// Clones bounds the clone cache of repositories registered by remote
	// URL only (--clone-cache-repos, --clone-max-mib, --clone-timeout).
	Clones CloneConfig
	// ForgesFile is the forge accounts' file (--forges-file; default
	// DATA_DIR/forges.json): see internal/forgeconf.
	ForgesFile string
	// Notify tunes the notifier (queues, retries, the apprise binary);
	// zero fields take its defaults.
	Notify notify.Config
	// CLI, when set, is the path of the kandev binary: the banner names it
	// for the operator commands, which need not be on PATH (make run does
	// not install it). kandev serve sets it from os.Executable.
	CLI string
	// Backup is the scheduled SQLite backups (--backup-every, --backup-dir,
	// --backup-keep); off when Backup.Every is zero.
	Backup BackupSchedule
	// Traces is where spans go (--otlp-endpoint; see tracing.go).
	Traces TracesConfig
	// Security is the rate limits and the audit log's retention.
	Security SecurityConfig
}

// Run serves the backend until ctx is cancelled, then shuts down. ctx is
// the base context of every part: its end cancels every call in flight
// (requests, automations, agents' store calls, waits for answers), and
// the writes that record how the parts stopped (each agent's session,
// the events still queued for other backends, the end of the lease)
// finish within shutdownWait, before the database closes.
func Run(ctx context.Context, cfg Config) (err error) {
	b, err := start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.stop()) }()
	cfg = b.cfg
	tokenWhere := "KANDEV_TOKEN"
	switch {
	case cfg.Token != "":
	case b.cred.clear == "":
		tokenWhere = "the operator's keeping (the token file was removed; the backend holds only its hash)"
	default:
		tokenWhere = b.tokenPath
	}
	where := "data dir " + cfg.DataDir
	if cfg.Database != "" {
		where = "database " + store.RedactURL(cfg.Database) + ", " + where
	}
	_, _ = fmt.Fprintf(cfg.Out, "kandev %s serving on http://%s (%s; operator token in %s)\n", toolserver.Version, b.addr, where, tokenWhere)
	_, _ = fmt.Fprintf(cfg.Out, "board: open http://%s/ and sign in with the operator token\n", b.addr)
	if cfg.CLI != "" {
		_, _ = fmt.Fprintf(cfg.Out, "CLI: %[1]s token prints the operator token; %[1]s help lists every command\n", cfg.CLI)
	}
	if cfg.Ready != nil {
		cfg.Ready(b.addr)
	}
	select {
	case err := <-b.served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// start listens, builds the backend's parts in dependency order and
// starts them: serving, the profile endpoint, the cluster (lease and
// events), the workflow engine's sweeps and the agents a previous
// process left. It listens first: the bound address is the URL every
// part hands out. Each step pushes its stop onto the backend's lifetime;
// on a failure what was started is stopped again.
func start(ctx context.Context, cfg Config) (b *backend, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	if cfg.SessionScope == "" {
		cfg.SessionScope = kanban.ScopeTree
	}
	if !slices.Contains(kanban.SessionScopes, cfg.SessionScope) {
		return nil, errors.New("the session scope must be tree or workspace")
	}
	// Before anything is written (the token, the registry, the database).
	if err := store.CheckNotNewer(ctx, cfg.Database, cfg.DataDir); err != nil {
		return nil, err
	}
	life := newLifetime(ctx)
	defer func() {
		if err != nil {
			err = errors.Join(err, life.close(shutdownWait))
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	life.push("listener", func(context.Context) error { return closeListener(ln) })
	if b, err = newBackend(life, cfg, ln.Addr().String()); err != nil {
		return nil, err
	}
	if err := b.enableConformance(cfg.Conformance, ln.Addr()); err != nil {
		return nil, err
	}
	if err := b.register(); err != nil {
		cfg.Logger.Warn("operator commands will not find this backend's token by its address", "err", err)
	}
	b.serve(ln)
	if cfg.Pprof != "" {
		if err := b.servePprof(life.ctx, cfg.Pprof, cfg.Out); err != nil {
			return nil, err
		}
	}
	if err := b.join(); err != nil {
		return nil, err
	}
	// Once announced, the backend hears the other backends' events.
	b.runFlow()
	b.runPRWatch()
	b.runBackups()
	b.runAuditSweep()
	b.runRoutines()
	if err := b.startAgents(); err != nil {
		return nil, fmt.Errorf("resume agent sessions: %w", err)
	}
	return b, nil
}

// stop ends the backend's lifetime: see lifetime.close.
func (b *backend) stop() error { return b.life.close(shutdownWait) }

// serve serves the backend's routes on ln until its lifetime ends; every
// request's context derives from the base context, so the end of it
// cancels them. served receives the error of a server that stopped by
// itself.
func (b *backend) serve(ln net.Listener) {
	srv := &http.Server{Handler: b.routes(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return b.life.ctx }}
	b.served = make(chan error, 1)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			b.served <- err
		}
	}()
	b.life.push("shutdown", func(ctx context.Context) error {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	// Pushed after the server, so stopped before it: the WebSocket
	// connections and the long-lived streams end first, then the server
	// waits for what is left.
	b.life.push("conformance", func(ctx context.Context) error { b.shutdownConformance(ctx); return nil })
	b.life.push("mcp", func(ctx context.Context) error { b.mcpHTTP.Shutdown(ctx); return nil })
	b.life.push("ws", func(context.Context) error { b.ws.Close(); return nil })
}

// closeListener closes a listener the HTTP server may have closed first.
func closeListener(ln net.Listener) error {
	if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// backend is the running backend's parts.
type backend struct {
	// life is the backend's base context and cleanup stack; cfg its
	// configuration (defaults applied); addr the address it listens on;
	// served the error of an HTTP server that stopped by itself.
	life   *lifetime
	cfg    Config
	addr   string
	served chan error

	store *store.Store
	// metrics is the Prometheus registry /metrics serves.
	metrics *metrics.Metrics
	tracing *tracing.Tracing // spans (off: the no-op provider)
	reg     *action.Registry
	// limits is the callers' rate limiter (nil: no limit).
	limits *ratelimit.Limiter
	// red redacts logs, audit summaries and bundles: it knows the
	// operator token and learns every secret's value; secrets is the
	// named secrets (secrets.go).
	red     *redact.Redactor
	secrets *vault.Secrets
	svc     *action.Service
	// topics are the contracts of subscribe and unsubscribe (the
	// WebSocket's own actions: see subscribeSchema).
	topics  map[kanban.Action]*action.Contract
	ws      *ws.Server
	mcp     *toolserver.Server
	mcpHTTP *toolserver.HTTPHandlers
	// cred is the operator credential: the token's hash (and the token
	// itself when this start read it).
	cred      credential
	tokenPath string
	log       *slog.Logger
	// attached maps a WebSocket connection to the session its MCP server
	// attached as, so a disconnect can be recorded.
	attached sync.Map

	// agents runs agents (nil when this backend launches none).
	agents *agent.Manager
	// events carry the domain events of the action layer and the runtime
	// to the workflow engine (flow).
	events *kanban.DomainEvents
	// flow is the workflow engine; notify records and sends notifications.
	flow   *flow.Engine
	notify *notify.Notifier
	// board is the operator's web board; boardConns its WebSocket
	// connections, closed when their board session ends.
	board      *board.Board
	boardConns boardConns
	// term runs the operator's terminals (nil when turned off);
	// termConns are their board connections.
	term      *terminal.Manager
	termConns termConns

	// prw watches the tasks' pull requests; webhooks are its handlers of
	// the forges' deliveries (the forges with a secret).
	prw      *prwatch.Watcher
	webhooks map[kanban.ForgeKind]http.Handler
	// forges is the one forge configuration (loadForges): ship actions
	// and the watcher use its accounts.
	forges *forgeconf.Set
	// git is the one git of tasks' worktrees (nil without git).
	git *worktree.Git

	// conformance is the conformance fixture server (nil unless enabled).
	conformance *conformance.Server
	// shared is what the backend shares with others on its database.
	shared *shared
}

// newBackend builds the backend's parts in dependency order under life
// (each pushes its stop): the data dir, the operator token, the store,
// the filesystem policy, the catalog, the cluster's bus, the runtime, the
// board, the action layer, the workflow engine, the WebSocket API and the
// external MCP endpoint. addr is where the backend listens.
func newBackend(life *lifetime, cfg Config, addr string) (*backend, error) {
	ctx, red := life.ctx, redact.New(cfg.Token)
	log, ring := withLogRing(cfg.Logger, red)
	cfg.Logger = log
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	cred, err := operatorToken(cfg.DataDir, cfg.Token)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	life.push("store", func(context.Context) error { return st.Close() })
	guard, err := sourcePolicy(cfg, cfg.Logger) // after the token and the database exist: their identities are pinned
	if err != nil {
		return nil, err
	}
	if err := action.Seed(ctx, st); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	compiled, err := compiledCatalog()
	if err != nil {
		return nil, fmt.Errorf("build MCP catalog: %w", err)
	}
	b := &backend{life: life, cfg: cfg, addr: addr, store: st, cred: cred, tokenPath: cfg.DataDir + string(os.PathSeparator) + TokenFile, log: cfg.Logger, metrics: metrics.New(), red: red}
	hub := &hub{}
	b.shared, b.events = newShared(cfg, st, hub), &kanban.DomainEvents{}
	if err := errors.Join(b.openSecrets(ctx), b.newTracing()); err != nil {
		return nil, err
	}
	pub := b.newNotifier(cfg, b.shared.publisher(hub))
	if b.agents, err = b.newAgents(guard, pub); err != nil {
		return nil, err
	}
	// The base context's end stops the agents; their sessions' last
	// writes finish before the store closes.
	life.push("agents", func(ctx context.Context) error { b.stopAgents(ctx); return nil })
	if b.board, err = b.newBoard(); err != nil {
		return nil, err
	}
	if b.reg, b.svc, err = b.newActions(compiled, pub, guard, ring); err != nil {
		return nil, err
	}
	if b.topics, err = topicContracts(); err != nil {
		return nil, err
	}
	b.shared.wire(b.svc)
	if err := b.newTerminals(); err != nil {
		return nil, err
	}
	b.newFlow(cfg)
	life.push("workflow", func(ctx context.Context) error { b.flow.Close(ctx); return nil })
	if err := b.newPRWatch(cfg); err != nil {
		return nil, err
	}
	hub.ws = b.newWSServer()
	if err := b.newExternalMCP(compiled); err != nil {
		return nil, err
	}
	b.newMetrics()
	return b, nil
}

// newActions is the action layer over the backend's store, publishing
// through pub and reaching files through guard, its agents those of the
// cluster (the local runtime's, when agents launch here).
func (b *backend) newActions(compiled *toolserver.Compiled, pub kanban.Publisher, guard *fsguard.Policy, ring *logring.Ring) (*action.Registry, *action.Service, error) {
	deps := action.Deps{Store: b.store, Publisher: pub, Logger: b.cfg.Logger, QuestionWait: b.cfg.QuestionWait,
		ModeActions: modeActions(compiled.Catalog()), FS: guard, SessionScope: b.cfg.SessionScope, BackendID: b.shared.id,
		Events: b.events, Diagnostics: b.diagnostics(b.cfg, ring), Observe: b.observeAction, Tracer: b.tracing.Provider,
		Secrets: b.secrets, Redactor: func() *redact.Redactor { return b.red }, ReportCalls: b.bridgeCalls(compiled.Catalog())}
	if b.limits = newLimits(b.cfg.Security); b.limits != nil {
		deps.Limits = b.limits
	}
	deps.Git = b.git
	deps.Ship = &action.Ship{Forges: b.forges, PRs: b.store}
	var local action.Agents = action.NoAgents{}
	if b.agents != nil {
		local = b.agents
	}
	deps.Agents = b.shared.agents(local)
	return action.New(deps)
}

// newExternalMCP builds the MCP endpoint external clients reach, acting
// as the operator, and its HTTP transports.
func (b *backend) newExternalMCP(compiled *toolserver.Compiled) (err error) {
	b.mcp, err = toolserver.New(toolserver.Config{
		Compiled: compiled,
		Backend:  action.Caller{Registry: b.reg, Principal: action.Principal{Kind: action.Operator, Via: "mcp"}},
		Profile:  catalog.Profile{Mode: kanban.ModeExternal},
		Logger:   b.cfg.Logger,
		Sessions: b.cfg.MCPSessions,
		Observe:  b.metrics.ObserveTool,
		Tracer:   b.tracing.Provider,
	})
	if err != nil {
		return err
	}
	b.mcpHTTP = b.mcp.HTTP(b.life.ctx, "/mcp", "/mcp/sse", "/mcp/message")
	return nil
}

// join starts relaying events and this backend's lease on a shared
// database (nothing on SQLite), before its agents resume; with agents,
// each lease renewal then takes over orphaned sessions.
func (b *backend) join() error {
	ctx := b.life.ctx
	// What backends that are gone left attached (an earlier process of
	// this one, on SQLite every one) is released now, and on PostgreSQL
	// after every renewal of the lease, with the orphaned sessions.
	release := func(ctx context.Context) error {
		return b.svc.ReleaseAttachments(ctx, time.Now().Add(-b.shared.ttl))
	}
	if err := release(ctx); err != nil {
		return fmt.Errorf("release the MCP attachments of backends that are gone: %w", err)
	}
	takeOver := func(ctx context.Context) error {
		select {
		case <-b.life.ctx.Done():
			return nil // shutting down: the lease only lasts until the agents stopped
		default:
		}
		if b.agents == nil {
			return release(ctx)
		}
		return errors.Join(release(ctx), b.agents.Resume(ctx))
	}
	if err := b.shared.start(ctx, "http://"+b.addr, takeOver); err != nil {
		return fmt.Errorf("join the backends of the database: %w", err)
	}
	// The lease ends once the agents stopped, so that the other backends
	// take over their sessions at once, and the bus stops once it sent
	// what the agents and the automations published on the way out.
	b.life.push("cluster", func(ctx context.Context) error {
		b.stopAgents(ctx)
		b.flow.Close(ctx)
		b.shared.stop(ctx)
		return nil
	})
	return nil
}

// register records the backend in its configuration's Registry (when
// set) under its bound address, until it stops.
func (b *backend) register() error {
	cfg := b.cfg
	if cfg.Registry == "" {
		return nil
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	rec := BackendRecord{URL: "http://" + b.addr, PID: os.Getpid(), DataDir: dataDir}
	if cfg.Token == "" && b.cred.clear != "" {
		rec.TokenFile = filepath.Join(dataDir, TokenFile)
	}
	unregister, err := registerBackend(cfg.Registry, b.addr, rec)
	if err != nil {
		return err
	}
	b.life.push("registry", func(context.Context) error { unregister(); return nil })
	return nil
}
