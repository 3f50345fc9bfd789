package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// seedSteps are the steps of the default "Kanban" workflow, in order. The
// auto-advancing ones move a task on when its agent signals the step done
// (step_complete_kandev; for an agent the runtime runs, at the end of
// that turn).
var seedSteps = []struct {
	name, color string
	start, auto bool
}{
	{"Backlog", "#6b7280", true, true},
	{"In Progress", "#3b82f6", false, true},
	{"Review", "#f59e0b", false, true},
	{"Done", "#10b981", false, false},
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
	for i, st := range seedSteps {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workflow_steps (id, workflow_id, name, position, color,
			prompt, is_start_step, allow_manual_move, auto_advance, auto_advance_requires_signal, wip_limit,
			auto_archive_after_hours, events, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, 1, ?, ?, 0, 0, '{}', ?, ?)`,
			kanban.NewID(), wfID, st.name, i, st.color, boolInt(st.start), boolInt(st.auto), boolInt(st.auto), now, now); err != nil {
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
