package store

import (
	"context"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// AttachSession records an MCP server attaching to backend (which also
// moves a CREATED session to RUNNING). A session made by hand records
// backend as its owner, the holder of its connection, so that the
// attachment is released when that backend is gone (ReleaseAttachments);
// a managed session's owner is its runtime's and stays.
func (s *Store) AttachSession(ctx context.Context, id, backend string) (*kanban.Session, error) {
	return s.updateSession(ctx, id, `mcp_attached = 1, last_attached_at = ?,
		state = CASE WHEN state = ? THEN ? ELSE state END,
		owner_id = CASE WHEN managed = 0 THEN ? ELSE owner_id END`,
		fmtTime(kanban.Now()), string(kanban.SessionCreated), string(kanban.SessionRunning), backend)
}

// DetachSession records that a session's MCP server went away. A session
// made by hand then has no agent: it is CREATED again, waiting for one to
// connect (RUNNING only ever meant "attached" for it).
func (s *Store) DetachSession(ctx context.Context, id string) (*kanban.Session, error) {
	return s.updateSession(ctx, id, detachSet, fmtTime(kanban.Now()), string(kanban.SessionRunning), string(kanban.SessionCreated))
}

// detachSet is the SET clause of a detach (args: now, RUNNING, CREATED).
const detachSet = `mcp_attached = 0, last_detached_at = ?,
	state = CASE WHEN managed = 0 AND state = ? THEN ? ELSE state END`

// ReleaseAttachments detaches the sessions whose MCP server is recorded
// as attached to a backend that is gone: not backend itself and without a
// lease renewed at or after since (on SQLite no backend has a lease, so
// at start every attachment of an earlier process is released). It
// returns the sessions it changed (at most kanban.MaxLimit a call).
func (s *Store) ReleaseAttachments(ctx context.Context, backend string, since time.Time) ([]kanban.Session, error) {
	var out []kanban.Session
	err := s.tx(ctx, func(tx txn) error {
		ids, err := scanAll(ctx, tx, scanID, `SELECT id FROM task_sessions WHERE mcp_attached = 1 AND owner_id <> ?
			AND owner_id NOT IN (SELECT id FROM cluster_backends WHERE heartbeat_at >= ?) ORDER BY id LIMIT ?`,
			backend, fmtTime(since), kanban.MaxLimit)
		if err != nil {
			return err
		}
		out = out[:0]
		now := fmtTime(kanban.Now())
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE task_sessions SET `+detachSet+`, updated_at = ? WHERE id = ?`,
				now, string(kanban.SessionRunning), string(kanban.SessionCreated), now, id); err != nil {
				return err
			}
			sess, err := getSession(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, *sess)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("release attachments: %w", err)
	}
	return out, nil
}
