package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// writerScope is the workspace whose profiles p writes: "" for the
// operator (every profile, and new ones are global), the session's own
// workspace for a session (a config-mode session is the operator's
// delegate there; see kanban.CheckProfileWrite). A session principal
// without a workspace is refused rather than taken for the operator.
func writerScope(p Principal) (string, error) {
	switch p.Kind {
	case Operator:
		return "", nil
	case Session:
		if p.WorkspaceID != "" {
			return p.WorkspaceID, nil
		}
	}
	return "", kanban.Errorf(kanban.CodeForbidden, "the caller has no workspace to scope profiles to")
}

// listScope is the workspace whose usable profiles a listing by p shows:
// the operator's optional filter, or a session's own workspace (asking for
// another is FORBIDDEN).
func listScope(p Principal, requested string) (string, error) {
	ws, err := writerScope(p)
	if err != nil || ws == "" {
		return requested, err
	}
	if requested != "" && requested != ws {
		return "", kanban.Errorf(kanban.CodeForbidden, "a session lists the profiles of its own workspace")
	}
	return ws, nil
}

// checkProfiles verifies that the optional profile ids exist and may run
// a session of a task of workspaceID (kanban.CheckProfileUse), before
// anything is written; the store checks the same when it writes the
// session.
func (s *Service) checkProfiles(ctx context.Context, workspaceID, agentProfileID, executorProfileID string) error {
	if agentProfileID != "" {
		p, err := s.store.GetAgentProfile(ctx, agentProfileID)
		if err != nil {
			return err
		}
		if err := kanban.CheckProfileUse(kanban.AgentProfileKind, p.WorkspaceID, workspaceID); err != nil {
			return err
		}
	}
	if executorProfileID != "" {
		p, err := s.store.GetExecutorProfile(ctx, executorProfileID)
		if err != nil {
			return err
		}
		if err := kanban.CheckProfileUse(kanban.ExecutorProfileKind, p.WorkspaceID, workspaceID); err != nil {
			return err
		}
	}
	return nil
}
