package agent

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// permissionWaiting starts the conversation's record of a permission
// request while it waits for an operator.
const permissionWaiting = "Waiting for an operator: "

// permissionOutcome is what the conversation's record of the closed
// request p says: who chose which option, or why nobody did (why: what
// cancelled it).
func permissionOutcome(p *kanban.Permission, why string) string {
	title := kanban.Clip(p.Title, kanban.MaxPermissionTitleLen)
	switch p.State {
	case kanban.PermissionResolved:
		name := p.OptionID
		for _, o := range p.Options {
			if o.OptionID == p.OptionID && o.Name != "" {
				name = o.Name
			}
		}
		by := p.ResolvedBy
		if by == "" {
			by = "an operator"
		}
		return fmt.Sprintf("Answered “%s” by %s: %s", kanban.Clip(name, 100), by, title)
	case kanban.PermissionExpired:
		return "Expired, nobody answered in time: " + title
	}
	if why == "" {
		why = "nobody answered"
	}
	return "Cancelled (" + why + "): " + title
}

// settlePermission rewrites the conversation's record of the closed
// permission request p with its outcome and publishes it, so the page
// redraws it in place and a reload reads the outcome.
func (m *Manager) settlePermission(ctx context.Context, p *kanban.Permission, why string) {
	if p.State == kanban.PermissionPending {
		return
	}
	m.rewrite(ctx, p.MessageID, permissionOutcome(p, why))
}

// rewrite replaces a runtime message's content ("" id: none) and
// publishes it.
func (m *Manager) rewrite(ctx context.Context, messageID, content string) {
	if messageID == "" {
		return
	}
	msg, err := m.store.UpdateMessage(ctx, messageID, content)
	if err != nil {
		if kanban.ErrorCode(err) != kanban.CodeNotFound { // the task was deleted meanwhile
			m.log.Warn("record a permission's outcome", "err", err)
		}
		return
	}
	m.publishMessage(ctx, msg)
}
