package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

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
	{"exec-docker", kanban.ExecutorTypeDocker, "Runs each session's agent in a Docker container of its own"},
	{"exec-ssh", kanban.ExecutorTypeSSH, "Runs each session's agent on a host reached over SSH"},
}

// laterExecutors are built-in executors added after the first release:
// Seed adds each one a seeded database lacks (by name), with no profile
// (the operator creates them: a Docker profile needs an image, an SSH
// profile a host and keys).
var laterExecutors = []string{"exec-docker", "exec-ssh"}

// SeededExecutors is how many executors a fresh database is seeded with.
func SeededExecutors() int { return len(seedExecutors) }

// Seed creates, in one transaction, the default workspace with the
// workflow w and its steps (the action layer's default template) when
// there is no workspace, the built-in agents when there is no agent and
// the built-in executors when there is no executor, each agent and
// executor but exec-docker and exec-ssh with one default profile named "default"; a
// seeded database only gets the built-in executors added since it was
// seeded (laterExecutors), and otherwise nothing. The workflow is checked as an imported one is (its
// name here; the caller checked its steps with kanban.CheckSteps).
func (s *Store) Seed(ctx context.Context, w kanban.Workflow, steps []kanban.WorkflowStep) error {
	if err := validateWorkflow(w); err != nil {
		return fmt.Errorf("seed workflow: %w", err)
	}
	return s.tx(ctx, func(tx txn) error {
		seeds := []struct {
			table     string
			fn, later func(context.Context, txn, string) error
		}{
			{"workspaces", func(ctx context.Context, tx txn, now string) error { return seedWorkspace(ctx, tx, now, w, steps) }, noLater},
			{"agents", seedAgentRows, noLater},
			{"executors", seedExecutorRows, addLaterExecutors},
		}
		now := fmtTime(kanban.Now())
		for _, st := range seeds {
			var n int
			// st.table is one of the constants above.
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+st.table).Scan(&n); err != nil {
				return fmt.Errorf("seed %s: %w", st.table, err)
			}
			if n > 0 {
				if err := st.later(ctx, tx, now); err != nil {
					return fmt.Errorf("seed %s: %w", st.table, err)
				}
				continue
			}
			if err := st.fn(ctx, tx, now); err != nil {
				return fmt.Errorf("seed %s: %w", st.table, err)
			}
		}
		return nil
	})
}

// seedWorkspace creates the workspace "Default" and its workflow.
func seedWorkspace(ctx context.Context, tx txn, now string, w kanban.Workflow, steps []kanban.WorkflowStep) error {
	wsID := kanban.NewID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, description, created_at, updated_at)
		VALUES (?, 'Default', '', ?, ?)`, wsID, now, now); err != nil {
		return err
	}
	w.WorkspaceID = wsID
	_, _, err := importWorkflow(ctx, tx, w, steps)
	return err
}

func seedAgentRows(ctx context.Context, tx txn, now string) error {
	for _, a := range seedAgents {
		if err := insertAgentRow(ctx, tx, now, a[0], a[1]); err != nil {
			return err
		}
	}
	return nil
}

// insertAgentRow adds the agent type name with its default profile
// unless a row of that name exists (another backend may add it at the
// same moment: the name is unique).
func insertAgentRow(ctx context.Context, tx txn, now, name, display string) error {
	id := kanban.NewID()
	res, err := tx.ExecContext(ctx, `INSERT INTO agents (id, name, display_name, supports_mcp, mcp_config_path,
		created_at, updated_at) VALUES (?, ?, ?, 1, '', ?, ?) ON CONFLICT (name) DO NOTHING`, id, name, display, now, now)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO agent_profiles (`+profileColumns+`)
		VALUES (?, ?, 'default', '', 0, 1, 1, ?, ?, NULL)`, kanban.NewID(), id, now, now)
	return err
}

// EnsureAgents adds, in one transaction, the agent types that have no
// agents row, each with a default profile; existing rows stay as they are.
func (s *Store) EnsureAgents(ctx context.Context, types []kanban.AgentTypeName) error {
	for _, t := range types {
		if err := kanban.SingleLine("display_name", t.DisplayName); err != nil {
			return err
		}
	}
	return s.tx(ctx, func(tx txn) error {
		now := fmtTime(kanban.Now())
		for _, t := range types {
			if err := insertAgentRow(ctx, tx, now, t.Name, t.DisplayName); err != nil {
				return fmt.Errorf("add agent type: %w", err)
			}
		}
		return nil
	})
}

func seedExecutorRows(ctx context.Context, tx txn, now string) error {
	for _, e := range seedExecutors {
		id := kanban.NewID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO executors (`+executorColumns+`) VALUES (?, ?, ?, ?, ?)`,
			id, e[0], e[1], e[2], now); err != nil {
			return err
		}
		if e[1] == kanban.ExecutorTypeDocker || e[1] == kanban.ExecutorTypeSSH {
			continue // its profiles are the operator's (an image, a host to choose)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO executor_profiles (`+execProfileColumns+`)
			VALUES (?, ?, 'default', ?, '{}', '', '', 1, ?, ?, NULL)`, kanban.NewID(), id, kanban.MCPPolicies[0],
			now, now); err != nil {
			return err
		}
	}
	return nil
}

func noLater(context.Context, txn, string) error { return nil }

// addLaterExecutors adds the laterExecutors a seeded database lacks.
func addLaterExecutors(ctx context.Context, tx txn, now string) error {
	for _, e := range seedExecutors {
		if !slices.Contains(laterExecutors, e[0]) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO executors (`+executorColumns+`) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, kanban.NewID(), e[0], e[1], e[2], now); err != nil {
			return err
		}
	}
	return nil
}
