package agent

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Resume takes over the orphaned sessions (see kanban ClaimOrphans):
// those a previous process of this backend left, or another backend
// whose lease lapsed. Queued sessions start, live ones are resumed (ACP
// session/load) or fail, and their pending permission requests (whose
// agents are gone) are cancelled. It is run at start and, with several
// backends, again on every lease renewal; each orphan is taken over by
// one backend once.
func (m *Manager) Resume(ctx context.Context) error {
	for {
		claimed, err := m.store.ClaimOrphans(ctx, m.cfg.BackendID, m.leaseSince(), kanban.MaxLimit)
		if err != nil {
			return err
		}
		m.takenOver.Add(uint64(len(claimed)))
		for _, s := range claimed {
			if err := m.cancelPermissions(ctx, s.ID); err != nil {
				return err
			}
			m.enqueue(s.ID, s.State != kanban.SessionQueued && s.AgentSessionID != "")
		}
		if len(claimed) < kanban.MaxLimit {
			return nil
		}
	}
}

// TakenOver is how many orphaned sessions this runtime claimed (at start
// and from backends whose lease lapsed).
func (m *Manager) TakenOver() uint64 { return m.takenOver.Load() }

// cancelPermissions cancels the pending permission requests of a session
// whose agent is gone.
func (m *Manager) cancelPermissions(ctx context.Context, sessionID string) error {
	for {
		l, err := m.store.ListPermissions(ctx, kanban.PermissionFilter{SessionID: sessionID, State: kanban.PermissionPending},
			kanban.Page{Limit: kanban.MaxLimit})
		if err != nil {
			return err
		}
		for i := range l.Items {
			p, closed, err := m.store.ClosePermission(ctx, l.Items[i].ID, kanban.PermissionCancelled)
			if err != nil {
				return err
			}
			if closed {
				m.settlePermission(ctx, p, "its agent was restarted")
				m.publishPermission(kanban.EventPermissionResolved, p)
			}
		}
		if l.NextCursor == "" {
			return nil
		}
	}
}
