package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// seedSteps are the steps of the default "Kanban" workflow, in order, and
// their automations (the reference product's Kanban, in function): an
// agent's turn on a Backlog task takes it to In Progress, a task moved to
// In Progress gets an agent, a finished turn takes the task to Review, a
// new turn in Review or Done (the operator answered the agent) takes it
// back to In Progress, and Done completes the task. auto_advance is there
// for agents connected by hand, which have no turns: their
// step_complete_kandev moves the task on at once.
var seedSteps = []struct {
	name, color string
	start, auto bool
	events      func(ids []string) map[string][]kanban.StepAction
}{
	{"Backlog", "#6b7280", true, true, func(ids []string) map[string][]kanban.StepAction {
		return map[string][]kanban.StepAction{
			kanban.EventTurnStart:    {{Type: kanban.AutoMoveNext}},
			kanban.EventTurnComplete: {moveTo(ids[2])},
		}
	}},
	{"In Progress", "#3b82f6", false, true, func(ids []string) map[string][]kanban.StepAction {
		return map[string][]kanban.StepAction{
			kanban.EventEnter:        {{Type: kanban.AutoStartAgent}},
			kanban.EventTurnComplete: {moveTo(ids[2])},
		}
	}},
	{"Review", "#f59e0b", false, true, func([]string) map[string][]kanban.StepAction {
		return map[string][]kanban.StepAction{kanban.EventTurnStart: {{Type: kanban.AutoMovePrevious}}}
	}},
	{"Done", "#10b981", false, false, func(ids []string) map[string][]kanban.StepAction {
		return map[string][]kanban.StepAction{
			kanban.EventEnter:     {{Type: kanban.AutoSetState, Config: map[string]json.RawMessage{"state": json.RawMessage(`"COMPLETED"`)}}},
			kanban.EventTurnStart: {moveTo(ids[1])},
		}
	}},
}

// moveTo is a move_to_step automation to the step stepID.
func moveTo(stepID string) kanban.StepAction {
	id, _ := json.Marshal(stepID) // a string always marshals
	return kanban.StepAction{Type: kanban.AutoMoveToStep, Config: map[string]json.RawMessage{"step_id": id}}
}

// seedAgents are the built-in agent types: name and display name.
var seedAgents = [][2]string{
	{"claude-code", "Claude Code"},
	{"codex", "Codex"},
	{"gemini", "Gemini CLI"},
	{"opencode", "OpenCode"},
	{"mock-agent", "Mock Agent"},
}

// seedExecutors are the built-in executors: name, type and description.
var seedExecutors = [][3]string{
	{"exec-local", "local", "Runs agents directly in the repository on this machine"},
	{"exec-worktree", "worktree", "Runs each task's agent in its own git worktree"},
}

// Seed creates, in one transaction, the default workspace with its
// "Kanban" workflow when there is no workspace, the built-in agents when
// there is no agent and the built-in executors when there is no executor,
// each agent and executor with one default profile named "default". On a
// seeded database it writes nothing.
func (s *Store) Seed(ctx context.Context) error {
	return s.tx(ctx, func(tx txn) error {
		steps := []struct {
			table string
			fn    func(context.Context, txn, string) error
		}{
			{"workspaces", seedWorkspace},
			{"agents", seedAgentRows},
			{"executors", seedExecutorRows},
		}
		now := fmtTime(kanban.Now())
		for _, st := range steps {
			var n int
			// st.table is one of the constants above.
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+st.table).Scan(&n); err != nil {
				return fmt.Errorf("seed %s: %w", st.table, err)
			}
			if n > 0 {
				continue
			}
			if err := st.fn(ctx, tx, now); err != nil {
				return fmt.Errorf("seed %s: %w", st.table, err)
			}
		}
		return nil
	})
}

func seedWorkspace(ctx context.Context, tx txn, now string) error {
	wsID, wfID := kanban.NewID(), kanban.NewID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, description, created_at, updated_at)
		VALUES (?, 'Default', '', ?, ?)`, wsID, now, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO workflows (id, workspace_id, name, description, sort_order,
		created_at, updated_at) VALUES (?, ?, 'Kanban', '', 0, ?, ?)`, wfID, wsID, now, now); err != nil {
		return err
	}
	ids := make([]string, len(seedSteps))
	for i := range ids {
		ids[i] = kanban.NewID()
	}
	for i, st := range seedSteps {
		events, err := encodeEvents(st.events(ids))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO workflow_steps (id, workflow_id, name, position, color,
			prompt, is_start_step, allow_manual_move, auto_advance, auto_advance_requires_signal, wip_limit,
			auto_archive_after_hours, events, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, 1, ?, 0, 0, 0, ?, ?, ?)`,
			ids[i], wfID, st.name, i, st.color, boolInt(st.start), boolInt(st.auto), events, now, now); err != nil {
			return err
		}
	}
	return nil
}

func seedAgentRows(ctx context.Context, tx txn, now string) error {
	for _, a := range seedAgents {
		id := kanban.NewID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, name, display_name, supports_mcp, mcp_config_path,
			created_at, updated_at) VALUES (?, ?, ?, 1, '', ?, ?)`, id, a[0], a[1], now, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_profiles (`+profileColumns+`)
			VALUES (?, ?, 'default', '', 0, 1, 1, ?, ?, NULL)`, kanban.NewID(), id, now, now); err != nil {
			return err
		}
	}
	return nil
}

func seedExecutorRows(ctx context.Context, tx txn, now string) error {
	for _, e := range seedExecutors {
		id := kanban.NewID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO executors (`+executorColumns+`) VALUES (?, ?, ?, ?, ?)`,
			id, e[0], e[1], e[2], now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO executor_profiles (`+execProfileColumns+`)
			VALUES (?, ?, 'default', ?, '{}', '', '', 1, ?, ?, NULL)`, kanban.NewID(), id, kanban.MCPPolicies[0],
			now, now); err != nil {
			return err
		}
	}
	return nil
}
