package action

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/taskdir"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// Deps are what the action handlers are built from.
type Deps struct {
	Store     kanban.Store
	Publisher kanban.Publisher
	Logger    *slog.Logger
	// QuestionWait bounds how long question.ask waits for an answer
	// (default 10 minutes); a caller may ask for less.
	QuestionWait time.Duration
	// ModeActions, when set, returns the actions a session in mode with
	// caps may call (the actions of that mode's MCP tools): a session
	// token then cannot do over any transport what its mode's tools
	// cannot. Nil leaves sessions limited by each action's Allow only.
	ModeActions func(mode kanban.Mode, caps []string) map[kanban.Action]bool
	// Agents runs the agents of the sessions that tasks start (the
	// runtime). Nil (NoAgents): this backend launches no agent, and
	// sessions wait for agents an operator connects by hand.
	Agents Agents
	// FS is the filesystem policy: the source roots and protected paths
	// every local path is checked against, the data dir whose per-task
	// folders tasks without a checkout work in, and the bounded reader of
	// workspace files. Nil: a policy with no root and no data dir, which
	// refuses every local path.
	FS *fsguard.Policy
	// SessionScope is how far a task session's writes reach (default
	// kanban.ScopeTree; see mutableTask).
	SessionScope kanban.SessionScope
	// Diagnostics gives diagnostic bundles what only the application
	// knows: its version, its own entries and its secrets.
	Diagnostics Diagnostics
	// Events receives the domain events the actions emit (a task created
	// or moved, a step freed), which the workflow engine reacts to. Nil:
	// nobody reacts.
	Events *kanban.DomainEvents
	// Git reads (and writes) tasks' git worktrees: their changes, diffs
	// and commits. Nil: git is not installed here, and those actions
	// answer UNAVAILABLE.
	Git *worktree.Git
	// BackendID is this backend: the owner of the managed sessions it
	// creates (its runtime's kanban id, agent.Config.BackendID), and the
	// holder of the MCP connection of a session made by hand when it
	// attaches here.
	BackendID string
	// Ship makes commits, pushes and pull requests (nil: those actions
	// answer UNAVAILABLE).
	Ship *Ship
	// Observe, when set, is told of every call the registry dispatches:
	// the action's name ("unknown" for a name that is none), the caller's
	// kind, the answer's error and how long it took (the metrics).
	Observe func(action string, caller Kind, err error, d time.Duration)
	// ReportCalls takes the tool calls a session's MCP bridge counted
	// (session.report_calls): it checks every entry against the closed
	// sets of tool names and outcomes and counts them all, or refuses
	// them all with a validation error. Nil: the reports are refused
	// (UNAVAILABLE).
	ReportCalls func(calls []ReportedCall) error
	// Tracer makes a span of every call the registry dispatches (nil:
	// none).
	Tracer trace.TracerProvider
	// Redactor, when set, returns the redactor that knows every secret
	// value (the secrets vault's): audit summaries pass through it.
	Redactor func() *redact.Redactor
	// Limits, when set, bounds each caller's rate of calls and writes
	// (RATE_LIMITED answers, checked before the call does anything).
	Limits Limits
	// Secrets stores the named secrets (nil: secret.* answer
	// UNAVAILABLE).
	Secrets Secrets
}

// Service holds the dependencies shared by every handler.
type Service struct {
	// quorum serializes the quorum checks of step decisions (one move
	// per reached quorum).
	quorum sync.Mutex
	// quorumReached, in tests, is called when a decision reached its
	// step's quorum, before the resolution is claimed.
	quorumReached func()
	store         kanban.Store
	pub           kanban.Publisher
	log           *slog.Logger
	questions     *Waiters
	qWait         time.Duration
	agents        Agents
	// managed: sessions that tasks start are run by agents.
	managed bool
	// events receives the actions' domain events (Deps.Events).
	events *kanban.DomainEvents
	// fs is the filesystem policy; dirs finds a task's workspace
	// directory under it (rich output files, diagnostic bundles).
	fs   *fsguard.Policy
	dirs taskdir.Dirs
	// diag configures and rate-limits diagnostic bundles.
	diag *diagnostics
	// scope is how far a task session's writes reach.
	scope kanban.SessionScope
	// backend is this backend's id (Deps.BackendID).
	backend string
	// ship is Deps.Ship.
	ship *Ship
	// git reads tasks' worktrees (Deps.Git).
	git *worktree.Git
	// turns wakes the commits waiting for an agent's message.
	turns *turnWaiters
	// secrets is Deps.Secrets.
	secrets Secrets
	// reportCalls is Deps.ReportCalls.
	reportCalls func([]ReportedCall) error
}

// New builds the registry with every declared action registered, bound
// to one Service. Its error is a declaration error (see Contracts): the
// backend does not start.
func New(d Deps) (*Registry, *Service, error) {
	if err := compileDeclared(); err != nil {
		return nil, nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.QuestionWait <= 0 {
		d.QuestionWait = 10 * time.Minute
	}
	if d.Publisher == nil {
		d.Publisher = nopPublisher{}
	}
	if d.FS == nil {
		d.FS = &fsguard.Policy{}
	}
	if d.Agents == nil {
		d.Agents = NoAgents{}
	}
	if d.Events == nil {
		d.Events = &kanban.DomainEvents{}
	}
	s := &Service{store: d.Store, pub: d.Publisher, log: d.Logger, questions: NewWaiters(), qWait: d.QuestionWait,
		diag:   &diagnostics{cfg: d.Diagnostics, last: map[string]time.Time{}},
		agents: d.Agents, managed: d.Agents.Launches(), events: d.Events, fs: d.FS, dirs: taskdir.Dirs{Store: d.Store, Guard: d.FS},
		scope: d.SessionScope, backend: d.BackendID, ship: d.Ship, git: d.Git, turns: &turnWaiters{}, secrets: d.Secrets, reportCalls: d.ReportCalls}
	d.Events.React(s.turns.react)
	r := &Registry{actions: make(map[kanban.Action]*registered, len(declared)), sessionOf: d.Store.GetSession, modeActions: d.ModeActions,
		derivedCaps: s.sessionCaps, observe: d.Observe, tracer: tracerOf(d.Tracer), audit: d.Store, redact: d.Redactor, log: d.Logger, limits: d.Limits}
	for _, b := range declared {
		r.actions[b.c.name] = &registered{c: b.c, run: b.bind(s)}
	}
	return r, s, nil
}

// WakeQuestion wakes a question.ask waiting here for question id (its
// answer was stored through another backend).
func (s *Service) WakeQuestion(id string) { s.questions.Wake(id) }

type nopPublisher struct{}

func (nopPublisher) Publish(string, string, any) {}

// WorkspaceTopic and SessionTopic name subscription topics.
func WorkspaceTopic(id string) string { return "workspace:" + id }

// SessionTopic names the topic of one session's events.
func SessionTopic(id string) string { return "session:" + id }

// workspaceFor resolves the workspace a call acts in: a session is confined
// to its bound workspace; the operator must name one or gets the first.
func (s *Service) workspaceFor(ctx context.Context, p Principal, id string) (string, error) {
	if p.Kind == Session {
		if id != "" && id != p.WorkspaceID {
			return "", kanban.Errorf(kanban.CodeForbidden, "workspace_id is outside this session's workspace")
		}
		return p.WorkspaceID, nil
	}
	if id != "" {
		if _, err := s.store.GetWorkspace(ctx, id); err != nil {
			return "", err
		}
		return id, nil
	}
	return s.store.DefaultWorkspaceID(ctx)
}

// resolveTaskID turns "self" into the bound task for sessions.
func resolveTaskID(p Principal, id string) (string, error) {
	if id == "self" {
		if p.Kind != Session {
			return "", kanban.FieldError("task_id", `"self" is only available to agent sessions`)
		}
		return p.TaskID, nil
	}
	return id, nil
}

// taskInScope resolves id ("self" for sessions), loads the task and checks
// a session may reach it: sessions reach only tasks in their own workspace.
func (s *Service) taskInScope(ctx context.Context, p Principal, id string) (*kanban.Task, error) {
	id, err := resolveTaskID(p, id)
	if err != nil {
		return nil, err
	}
	t, err := s.store.GetTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := confine(p, t.WorkspaceID, "task"); err != nil {
		return nil, err
	}
	return t, nil
}

// confine refuses (FORBIDDEN) a session access to an entity of kind that
// belongs to another workspace than its own.
func confine(p Principal, workspaceID, kind string) error {
	if p.Kind == Session && workspaceID != p.WorkspaceID {
		return kanban.Errorf(kanban.CodeForbidden, "%s is outside this session's workspace", kind)
	}
	return nil
}

// tracerOf is tp's tracer of the action layer: nil when tp is nil or the
// no-op provider, so that tracing off costs nothing.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if _, off := tp.(noop.TracerProvider); off || tp == nil {
		return nil
	}
	return tp.Tracer("kandev/action")
}
