package action

import (
	"context"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// SessionCreateIn is the payload of session.create.
type SessionCreateIn struct {
	TaskID            string      `json:"task_id,omitzero"`
	AgentProfileID    string      `json:"agent_profile_id,omitzero"`
	ExecutorProfileID string      `json:"executor_profile_id,omitzero"`
	Mode              kanban.Mode `json:"mode,omitzero"`
	Capabilities      []string    `json:"capabilities,omitzero"`
}

// SessionCreateOut is the result of session.create: the token is shown once.
type SessionCreateOut struct {
	Session *kanban.Session `json:"session"`
	Token   string          `json:"token"`
}

// SessionListIn is the payload of session.list: one task's sessions, or
// with WorkspaceID instead every session of a workspace (the board's agent
// badges), newest first.
type SessionListIn struct {
	TaskID      string `json:"task_id,omitzero"`
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// SetModeIn is the payload of session.set_mode.
type SetModeIn struct {
	ID   string      `json:"id,omitzero"`
	Mode kanban.Mode `json:"mode,omitzero"`
}

// SessionStopIn is the payload of session.stop.
type SessionStopIn struct {
	ID     string `json:"id,omitzero"`
	Reason string `json:"reason,omitzero"`
}

// TokenOut is the result of session.token.
type TokenOut struct {
	SessionID string `json:"session_id"`
	Token     string `json:"token"`
}

// MessageListIn is the payload of message.list (a task's conversation).
type MessageListIn struct {
	TaskID       string   `json:"task_id,omitzero"`
	SessionID    string   `json:"session_id,omitzero"`
	MessageTypes []string `json:"message_types,omitzero"`
	Sort         string   `json:"sort,omitzero"`
	Before       string   `json:"before,omitzero"`
	After        string   `json:"after,omitzero"`
	Limit        int      `json:"limit,omitzero"`
}

// NoIn is the payload of actions without parameters.
type NoIn struct{}

var _ = declare(Def[SessionCreateIn, *SessionCreateOut]{
	Name:   kanban.ActionSessionCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"task_id":             idProp("The session's task."),
		"agent_profile_id":    idProp("Agent profile; default the default."),
		"executor_profile_id": idProp("Executor profile; default the default."),
		"mode":                schema.Enum("MCP mode; default task.", strs(kanban.SessionModes)...),
		"capabilities": schema.Arr("Extra tool groups the session sees.", schema.Enum("A capability.", kanban.Capabilities...)).
			Items(0, len(kanban.Capabilities)).Unique(),
	}, "task_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in SessionCreateIn) (*SessionCreateOut, error) {
		sess, tok, err := s.store.CreateSession(ctx, kanban.SessionCreate{TaskID: in.TaskID, AgentProfileID: in.AgentProfileID,
			ExecutorProfileID: in.ExecutorProfileID, Mode: in.Mode, Capabilities: in.Capabilities})
		if err != nil {
			return nil, err
		}
		kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(sess.WorkspaceID), sess)
		return &SessionCreateOut{Session: sess, Token: tok}, nil
	},
})

var _ = declare(Def[IDIn, *kanban.Session]{
	Name:   kanban.ActionSessionGet,
	Effect: Reads,
	Allow:  all,
	Schema: idOnly("The session."),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Session, error) {
		sess, err := s.sessionInScope(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return sess, s.hideWorkdirs(ctx, p, sess)
	},
})

var _ = declare(Def[SessionListIn, *kanban.List[kanban.Session]]{
	Name:   kanban.ActionSessionList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id":      taskRef(`Task whose sessions to list; "self" is yours.`),
		"workspace_id": idProp("Every session of this workspace (instead of task_id)."),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in SessionListIn) (*kanban.List[kanban.Session], error) {
		var l *kanban.List[kanban.Session]
		if in.WorkspaceID != "" {
			if in.TaskID != "" {
				return nil, kanban.FieldError("workspace_id", "give task_id or workspace_id, not both")
			}
			ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
			if err != nil {
				return nil, err
			}
			if l, err = s.store.ListWorkspaceSessions(ctx, ws, kanban.Page{Limit: in.Limit, Cursor: in.Cursor}); err != nil {
				return nil, err
			}
		} else {
			t, err := s.taskInScope(ctx, p, in.TaskID)
			if err != nil {
				return nil, err
			}
			if l, err = s.store.ListSessions(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor}); err != nil {
				return nil, err
			}
		}
		sessions := make([]*kanban.Session, len(l.Items))
		ids := make([]string, len(l.Items))
		for i := range l.Items {
			sessions[i], ids[i] = &l.Items[i], l.Items[i].ID
		}
		usage, err := s.store.UsageOf(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, sess := range sessions {
			sess.Usage = usage[sess.ID]
		}
		return l, s.hideWorkdirs(ctx, p, sessions...)
	},
})

var _ = declare(Def[SetModeIn, *kanban.Session]{
	Name:   kanban.ActionSessionSetMode,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"id":   idProp("The session."),
		"mode": schema.Enum("The new MCP mode.", strs(kanban.SessionModes)...),
	}, "id", "mode"),
	Run: func(s *Service, ctx context.Context, _ Principal, in SetModeIn) (*kanban.Session, error) {
		return s.SetMode(ctx, in.ID, in.Mode)
	},
})

var _ = declare(Def[SessionStopIn, *kanban.Session]{
	Name:   kanban.ActionSessionStop,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"id":     idProp("The session."),
		"reason": stopReason(),
	}, "id"),
	Run: func(s *Service, ctx context.Context, p Principal, in SessionStopIn) (*kanban.Session, error) {
		sess, err := s.store.GetSession(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		note := "Stopped by " + sender(p)
		if in.Reason != "" {
			note += ": " + in.Reason
		}
		if _, err := s.endSessions(ctx, sess.TaskID, sess.ID, kanban.Message{Author: sender(p), Type: "status", Content: note}); err != nil {
			return nil, err
		}
		return s.store.GetSession(ctx, in.ID)
	},
})

var _ = declare(Def[IDIn, *TokenOut]{
	Name:   kanban.ActionSessionToken,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: idOnly("The session."),
	Run: func(s *Service, ctx context.Context, _ Principal, in IDIn) (*TokenOut, error) {
		tok, err := s.store.RotateSessionToken(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		return &TokenOut{SessionID: in.ID, Token: tok}, nil
	},
})

var _ = declare(Def[NoIn, *kanban.SessionProfile]{
	Name:   kanban.ActionSessionAttach,
	Effect: Writes,
	Allow:  AllowSession,
	Schema: schema.NoParams(),
	Run: func(s *Service, ctx context.Context, p Principal, _ NoIn) (*kanban.SessionProfile, error) {
		sess, err := s.store.AttachSession(ctx, p.SessionID, s.backend)
		if err != nil {
			return nil, err
		}
		kanban.EventSessionUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(sess.WorkspaceID), sess)
		return s.profile(ctx, sess)
	},
})

var _ = declare(Def[NoIn, *kanban.SessionProfile]{
	Name:   kanban.ActionSessionProfile,
	Effect: Reads,
	Allow:  AllowSession,
	Schema: schema.NoParams(),
	Run: func(s *Service, ctx context.Context, p Principal, _ NoIn) (*kanban.SessionProfile, error) {
		sess, err := s.store.GetSession(ctx, p.SessionID)
		if err != nil {
			return nil, err
		}
		return s.profile(ctx, sess)
	},
})

var _ = declare(Def[MessageListIn, *kanban.List[kanban.Message]]{
	Name:   kanban.ActionMessageList,
	Effect: Reads,
	Tool:   "get_task_conversation_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":    taskRef(`Task to read; "self" is yours.`),
		"session_id": idProp("Only messages of this session of the task."),
		"message_types": schema.Arr("Only messages of these types.", schema.Enum("A message type.", kanban.MessageTypes...)).
			Items(1, len(kanban.MessageTypes)).Unique(),
		"sort":   schema.Enum("Time order.", kanban.MessageOrders...).Default(kanban.OrderAsc),
		"before": schema.Str("Only messages before this cursor.").Len(1, kanban.MaxCursorLen),
		"after":  schema.Str("Only messages after this cursor.").Len(1, kanban.MaxCursorLen),
		"limit":  schema.Int("Page size.").Range(1, kanban.MaxLimit).Default(kanban.DefaultLimit),
	}, "task_id"),
	Run: (*Service).listMessages,
})

// SetMode persists a session's mode and notifies its subscribers (its
// attached MCP server rebuilds its tools on session.mode_changed).
func (s *Service) SetMode(ctx context.Context, id string, m kanban.Mode) (*kanban.Session, error) {
	if id == "" {
		return nil, kanban.FieldError("id", "is required")
	}
	if !kanban.ValidSessionMode(m) {
		return nil, kanban.FieldError("mode", "must be one of: task, task-title-pending, config, office")
	}
	sess, err := s.store.SetSessionMode(ctx, id, m)
	if err != nil {
		return nil, err
	}
	prof, err := s.profile(ctx, sess)
	if err != nil {
		return nil, err
	}
	s.publishProfile(prof)
	return sess, nil
}

// Detached records that a session's MCP server went away.
func (s *Service) Detached(ctx context.Context, sessionID string) {
	sess, err := s.store.DetachSession(ctx, sessionID)
	if err != nil {
		s.log.WarnContext(ctx, "record detach", "err", err)
		return
	}
	kanban.EventSessionUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(sess.WorkspaceID), sess)
}

// ReleaseAttachments detaches the sessions whose MCP server was attached
// to a backend that is gone (this backend's earlier process, a backend
// whose lease lapsed before since) and announces them, so that none reads
// "tools connected", or a session made by hand "running", for ever.
func (s *Service) ReleaseAttachments(ctx context.Context, since time.Time) error {
	for {
		released, err := s.store.ReleaseAttachments(ctx, s.backend, since)
		if err != nil {
			return err
		}
		for i := range released {
			kanban.EventSessionUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(released[i].WorkspaceID), &released[i])
		}
		if len(released) < kanban.MaxLimit {
			return nil
		}
	}
}

// sessionInScope loads a session a principal may see.
func (s *Service) sessionInScope(ctx context.Context, p Principal, id string) (*kanban.Session, error) {
	if id == "" {
		return nil, kanban.FieldError("id", "is required")
	}
	sess, err := s.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := confine(p, sess.WorkspaceID, "session"); err != nil {
		return nil, err
	}
	return sess, nil
}

func (s *Service) listMessages(ctx context.Context, p Principal, in MessageListIn) (*kanban.List[kanban.Message], error) {
	t, err := s.taskFor(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	f := kanban.MessageFilter{TaskID: t.ID, SessionID: in.SessionID, Types: in.MessageTypes, Before: in.Before, After: in.After, Limit: in.Limit}
	switch in.Sort {
	case "", kanban.OrderAsc:
	case kanban.OrderDesc:
		f.Desc = true
	default:
		return nil, kanban.FieldError("sort", "must be one of: asc, desc")
	}
	return s.store.ListMessages(ctx, f)
}

// hideWorkdirs clears the working directories (absolute server paths) of
// sessions shown to a principal that may not learn them (see
// seesLocalPaths).
func (s *Service) hideWorkdirs(ctx context.Context, p Principal, sessions ...*kanban.Session) error {
	see, err := s.seesLocalPaths(ctx, p)
	if err != nil || see {
		return err
	}
	for _, sess := range sessions {
		sess.Workdir = ""
	}
	return nil
}
