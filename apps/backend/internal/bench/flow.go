package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/flow"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// FlowRun is section 9: the workflow engine. EventToAction is the time from
// a task.move call over the WebSocket API to the on_enter automation's
// effect (a set_state's task.updated event) on a kandev serve;
// EventToRun from a task.comment.add to the run its on_comment queue_run
// queues (the session it starts for the task's primary agent, announced
// by session.created; the backend launches no agent process). The sweep
// figures are the auto-archive sweep of a board of SweepTasks tasks on one
// auto-archiving step, in process on the real SQLite store: archiving a
// batch of Archived due tasks, and a sweep that finds none due.
type FlowRun struct {
	EventToAction LatencyStat `json:"event_to_action"`
	EventToRun    LatencyStat `json:"event_to_run"`
	SweepTasks    int         `json:"sweep_tasks"`
	Archived      int         `json:"sweep_archived"`
	ArchiveMs     float64     `json:"sweep_archive_ms"`
	IdleSweep     LatencyStat `json:"sweep_idle"`
}

const (
	flowSamples   = 200
	sweepDue      = 500
	idleSweepReps = 20
)

// MeasureFlow runs section 9.
func MeasureFlow(ctx context.Context, cfg Config) (*FlowRun, error) {
	out := &FlowRun{SweepTasks: cfg.StoreTasks}
	var err error
	if out.EventToAction, out.EventToRun, err = measureEventToAction(ctx, cfg); err != nil {
		return nil, err
	}
	if err := measureSweep(ctx, cfg, out); err != nil {
		return nil, err
	}
	cfg.Logf("flow: event to action p50 %.2f ms, comment to queued run p50 %.2f ms; sweep of %d tasks: %d archived in %.1f ms, idle p50 %.2f ms",
		out.EventToAction.P50Ms, out.EventToRun.P50Ms, out.SweepTasks, out.Archived, out.ArchiveMs, out.IdleSweep.P50Ms)
	return out, nil
}

// measureEventToAction times, on one backend, moves onto a step whose
// on_enter sets the task's state until the state change is announced,
// and comments on tasks of a step whose on_comment queues a run until
// the run's session is announced.
func measureEventToAction(ctx context.Context, cfg Config) (onEnter, run LatencyStat, err error) {
	dir, err := mkdir(cfg, "flow")
	if err != nil {
		return onEnter, run, err
	}
	b, err := startBackend(ctx, cfg, "flow-backend", dir)
	if err != nil {
		return onEnter, run, err
	}
	defer b.stop()
	reviewed := newTaskSignals(func(name string, payload json.RawMessage) string {
		var t struct{ ID, State string }
		if name == kanban.EventTaskUpdated.Name() && json.Unmarshal(payload, &t) == nil && t.State == "REVIEW" {
			return t.ID
		}
		return ""
	})
	woken := newTaskSignals(func(name string, payload json.RawMessage) string {
		var s struct {
			TaskID string `json:"task_id"`
		}
		if name == kanban.EventSessionCreated.Name() && json.Unmarshal(payload, &s) == nil {
			return s.TaskID
		}
		return ""
	})
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: "ws" + strings.TrimPrefix(b.base, "http") + "/ws", Token: b.token,
		OnNotification: func(name string, p json.RawMessage) { reviewed.notify(name, p); woken.notify(name, p) }})
	if err != nil {
		return onEnter, run, err
	}
	defer func() { _ = c.Close() }()
	if onEnter, err = timeEvents(ctx, c, `{"name":"Bench flow","steps":[{"name":"A"},
		{"name":"B","events":{"on_enter":[{"type":"set_state","config":{"state":"REVIEW"}}]}}]}`, reviewed,
		func(task *kanban.Task, wf *action.WorkflowOut) error {
			return c.Call(ctx, kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: wf.Steps[1].ID}, nil)
		}); err != nil {
		return onEnter, run, err
	}
	if run, err = timeEvents(ctx, c, `{"name":"Bench office","steps":[{"name":"Work",
		"events":{"on_comment":[{"type":"queue_run","config":{"reason":"A comment was added."}}]}}]}`, woken,
		func(task *kanban.Task, _ *action.WorkflowOut) error {
			return c.Call(ctx, kanban.ActionTaskCommentAdd, map[string]any{"task_id": task.ID, "body": "Please look again."}, nil)
		}); err != nil {
		return onEnter, run, err
	}
	return onEnter, run, b.alive()
}

// timeEvents creates the workflow doc over c and, flowSamples times, a
// task in it, then times fire (the event) until done announces the
// task's reaction.
func timeEvents(ctx context.Context, c *ws.Client, doc string, done *taskSignals, fire func(*kanban.Task, *action.WorkflowOut) error) (LatencyStat, error) {
	var wf action.WorkflowOut
	if err := c.Call(ctx, kanban.ActionWorkflowCreate, json.RawMessage(doc), &wf); err != nil {
		return LatencyStat{}, err
	}
	if err := c.Call(ctx, kanban.ActionSubscribe, map[string]any{"topics": []string{"workspace:" + wf.Workflow.WorkspaceID}}, nil); err != nil {
		return LatencyStat{}, err
	}
	var samples []time.Duration
	no := false
	for i := range flowSamples {
		var created action.TaskCreateOut
		if err := c.Call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkflowID: wf.Workflow.ID, Title: fmt.Sprintf("flow %d", i), StartAgent: &no}, &created); err != nil {
			return LatencyStat{}, err
		}
		start := time.Now()
		if err := fire(created.Task, &wf); err != nil {
			return LatencyStat{}, err
		}
		select {
		case <-done.of(created.Task.ID):
		case <-time.After(10 * time.Second):
			return LatencyStat{}, fmt.Errorf("the automation of %s task %d never ran", wf.Workflow.Name, i)
		}
		samples = append(samples, time.Since(start))
	}
	return Latency(samples), nil
}

// taskSignals closes one channel per task once a notification match
// names the task.
type taskSignals struct {
	mu    sync.Mutex
	seen  map[string]chan struct{}
	match func(name string, payload json.RawMessage) string
}

func newTaskSignals(match func(string, json.RawMessage) string) *taskSignals {
	return &taskSignals{seen: map[string]chan struct{}{}, match: match}
}

// of is task id's channel.
func (s *taskSignals) of(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[id] == nil {
		s.seen[id] = make(chan struct{})
	}
	return s.seen[id]
}

// notify is (part of) the WebSocket client's notification handler.
func (s *taskSignals) notify(name string, payload json.RawMessage) {
	id := s.match(name, payload)
	if id == "" {
		return
	}
	ch := s.of(id)
	s.mu.Lock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	s.mu.Unlock()
}

// measureSweep seeds a board on one auto-archiving step and times sweeps.
func measureSweep(ctx context.Context, cfg Config, out *FlowRun) error {
	dir, err := mkdir(cfg, "flow-sweep")
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	if err := action.Seed(ctx, st); err != nil {
		return err
	}
	board, err := findBoard(ctx, st)
	if err != nil {
		return err
	}
	if err := seedTasks(ctx, st, board, cfg.StoreTasks); err != nil {
		return err
	}
	due := time.Now().Add(-2 * time.Hour).UTC().Format(seedTimeLayout)
	if _, err := st.DB().ExecContext(ctx, `UPDATE workflow_steps SET auto_archive_after_hours = 1 WHERE id = ?`, board.step); err != nil {
		return err
	}
	if _, err := st.DB().ExecContext(ctx, `UPDATE tasks SET step_entered_at = ? WHERE id IN (SELECT id FROM tasks
		WHERE workflow_step_id = ? ORDER BY created_at LIMIT ?)`, due, board.step, sweepDue); err != nil {
		return err
	}
	events := &kanban.DomainEvents{}
	_, svc, err := action.New(action.Deps{Store: st, Events: events})
	if err != nil {
		return err
	}
	eng := flow.New(ctx, flow.Config{Store: st, Service: svc, Events: events})
	defer eng.Close(ctx)
	t0 := time.Now()
	out.Archived = eng.Sweep(ctx)
	out.ArchiveMs = ms(time.Since(t0))
	var idle []time.Duration
	for range idleSweepReps {
		t0 := time.Now()
		if n := eng.Sweep(ctx); n != 0 {
			return fmt.Errorf("an idle sweep archived %d tasks", n)
		}
		idle = append(idle, time.Since(t0))
	}
	out.IdleSweep = Latency(idle)
	return nil
}
