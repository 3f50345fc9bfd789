package agent

import (
	"context"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// client is the ACP client side of one launch of a run: its connection's
// callbacks. Kandev advertises no file-system or terminal capability
// (agents work in their own directory with their own tools), so those
// requests are refused as unknown methods.
type client struct {
	r *run
	l *launch
}

var _ acp.Client = (*client)(nil)

// SessionUpdate records an update of the agent's session. Updates the
// agent replays while a session is loaded are history already recorded.
func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	r := c.r
	r.seen()
	defer c.l.order.processedOne()
	if r.loading.Load() {
		return nil
	}
	if u := n.Update.CurrentModeUpdate; u != nil {
		r.agentSwitched(n.SessionId, u.CurrentModeId)
		return nil
	}
	if u := n.Update.UsageUpdate; u != nil {
		r.usage.saw(u)
		return nil
	}
	r.rec.update(n.Update)
	return nil
}

// RequestPermission answers a permission request: the profile's
// auto-approve picks the allow option; otherwise the request waits
// (bounded) for an operator, and is answered cancelled when nobody
// answers in time or the session stops.
func (c *client) RequestPermission(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	r := c.r
	r.seen()
	c.l.order.waitBefore(ctx, string(req.ToolCall.ToolCallId))
	cancelled := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	title := "Permission requested"
	if req.ToolCall.Title != nil && *req.ToolCall.Title != "" {
		title = *req.ToolCall.Title
	}
	if c.l.autoApprove {
		if id, ok := allowOption(req.Options); ok {
			r.rec.note("permission", "Auto-approved (agent profile auto_approve): "+kanban.Clip(title, 500))
			return selected(id), nil
		}
	}
	p := permissionFor(r.id, title, req)
	// The conversation's record of the request, rewritten with its outcome
	// once it closes (settlePermission), so it never reads "waiting" after.
	if m := r.rec.note("permission", permissionWaiting+kanban.Clip(title, 500)); m != nil {
		p.MessageID = m.ID
	}
	created, err := r.m.store.CreatePermission(r.ctx, p)
	if err != nil {
		if !r.stopped() {
			r.m.log.WarnContext(r.ctx, "store permission request", "err", err)
		}
		r.m.rewrite(r.keep(), p.MessageID, "Not recorded (the agent was answered cancelled): "+kanban.Clip(title, 500))
		return cancelled, nil
	}
	wait := r.m.waiters.Add(created.ID)
	defer r.m.waiters.Remove(created.ID, wait)
	r.m.publishPermission(kanban.EventPermissionRequested, created)
	r.inputWait(+1)
	defer r.inputWait(-1)
	timer := time.NewTimer(r.m.cfg.PermissionWait)
	defer timer.Stop()
	closeAs, why := kanban.PermissionCancelled, ""
	select {
	case <-wait:
		if cur, err := r.m.store.GetPermission(r.keep(), created.ID); err == nil && cur.State == kanban.PermissionResolved {
			r.m.settlePermission(r.keep(), cur, "")
			return selected(acp.PermissionOptionId(cur.OptionID)), nil
		}
		return cancelled, nil // closed by whoever woke the wait (and recorded there)
	case <-timer.C:
		closeAs = kanban.PermissionExpired
	case <-ctx.Done(): // the agent withdrew the request, or the connection closed
		why = "the agent withdrew it"
	case <-r.ctx.Done():
		why = "the agent's session stopped"
	}
	// The request is closed whatever ended the wait, the run's stop
	// included.
	if cur, closed, err := r.m.store.ClosePermission(r.keep(), created.ID, closeAs); err == nil {
		if closed {
			r.m.settlePermission(r.keep(), cur, why)
			r.m.publishPermission(kanban.EventPermissionResolved, cur)
		} else if cur.State == kanban.PermissionResolved {
			r.m.settlePermission(r.keep(), cur, "")
			return selected(acp.PermissionOptionId(cur.OptionID)), nil // answered as the wait ended
		}
	}
	return cancelled, nil
}

// permissionFor is the stored form of an agent's permission request.
func permissionFor(sessionID, title string, req acp.RequestPermissionRequest) kanban.Permission {
	p := kanban.Permission{SessionID: sessionID, PendingID: string(req.ToolCall.ToolCallId), Title: title}
	if req.ToolCall.Kind != nil {
		p.Kind = string(*req.ToolCall.Kind)
	}
	for _, o := range req.Options {
		p.Options = append(p.Options, kanban.PermissionOption{OptionID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)})
	}
	return p
}

// allowOption picks the option an auto-approving profile chooses.
func allowOption(opts []acp.PermissionOption) (acp.PermissionOptionId, bool) {
	for _, kind := range []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways} {
		for _, o := range opts {
			if o.Kind == kind {
				return o.OptionId, true
			}
		}
	}
	return "", false
}

func selected(id acp.PermissionOptionId) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: id}}}
}

func (*client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (*client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (*client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (*client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (*client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (*client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (*client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
