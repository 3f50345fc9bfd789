package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const sessionColumns = `id, task_id, workspace_id, agent_profile_id, executor_profile_id, state,
	mcp_mode, capabilities, mcp_attached, last_attached_at, last_detached_at, created_at, updated_at,
	managed, workdir, agent_session_id, exit_code, error, started_at, ended_at, name`

// newSessionToken returns a fresh session token and the hash stored for it.
func newSessionToken() (token, hash string) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24.
	token = hex.EncodeToString(b[:])
	return token, hashSessionToken(token)
}

// hashSessionToken is what token_hash holds: hex(sha256(token)). Lookups go
// through the unique index on the hash, so response time does not depend on
// how much of a guessed token matches a real one.
func hashSessionToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession creates a session in state CREATED, with its first message
// when in.FirstMessage is set, and returns its token. It returns NOT_FOUND
// for a missing task or profile and VALIDATION_ERROR for an invalid mode,
// capability or first message.
func (s *Store) CreateSession(ctx context.Context, in kanban.SessionCreate) (*kanban.Session, string, error) {
	if err := checkSessionCreate(&in); err != nil {
		return nil, "", err
	}
	token, hash := newSessionToken()
	var out *kanban.Session
	err := s.tx(ctx, func(tx txn) error {
		if err := requireLiveSession(ctx, tx, in.UnlessEnded); err != nil {
			return err
		}
		var err error
		out, err = createSession(ctx, tx, in, hash, nil)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, token, nil
}

// requireLiveSession is CONFLICT when session id (none when "") has
// ended. It locks the session's row (a no-op update) so that a
// concurrent cancel waits for the transaction, or the transaction for it.
func requireLiveSession(ctx context.Context, tx txn, id string) error {
	if id == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE task_sessions SET state = state WHERE id = ?`, id); err != nil {
		return fmt.Errorf("lock session: %w", err)
	}
	var st string
	if err := tx.QueryRowContext(ctx, `SELECT state FROM task_sessions WHERE id = ?`, id).Scan(&st); err != nil {
		return notFound(err, "session")
	}
	if kanban.SessionState(st).Ended() {
		return kanban.Errorf(kanban.CodeConflict, "the agent whose turn led here has ended")
	}
	return nil
}

// checkSessionCreate defaults in's mode and checks its first message (text
// the action layer composes, which no contract checks). The mode and the
// capabilities are session.create's contract's enums; every other caller
// leaves them empty.
func checkSessionCreate(in *kanban.SessionCreate) error {
	if in.Mode == "" {
		in.Mode = kanban.ModeTask
	}
	if in.FirstMessage != nil {
		return checkMessageBody(*in.FirstMessage)
	}
	return nil
}

// createSession writes a checked session whose token hashes to hash, and
// its first message. t is the session's task when the caller has it as
// tx holds it (nil: it is read).
func createSession(ctx context.Context, tx txn, in kanban.SessionCreate, hash string, t *kanban.Task) (*kanban.Session, error) {
	if t == nil {
		var err error
		if t, err = getTask(ctx, tx, in.TaskID); err != nil {
			return nil, err
		}
	}
	wsID := t.WorkspaceID
	agent, execID, err := resolveProfiles(ctx, tx, in.AgentProfileID, in.ExecutorProfileID, wsID)
	if err != nil {
		return nil, err
	}
	caps, agentID := defaultCapabilities(in.Capabilities, agent, t), ""
	if agent != nil {
		agentID = agent.ID
	}
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	id, now := kanban.NewID(), fmtTime(kanban.Now())
	state := kanban.SessionCreated
	if in.Managed {
		state = kanban.SessionQueued
	}
	// RETURNING reads the row back as getSession would, in the same statement.
	sess, err := scanSession(tx.QueryRowContext(ctx, `INSERT INTO task_sessions (id, task_id, workspace_id,
		agent_profile_id, executor_profile_id, state, mcp_mode, capabilities, token_hash,
		mcp_attached, managed, owner_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
		RETURNING `+sessionColumns,
		id, in.TaskID, wsID, nullString(agentID), nullString(execID), string(state),
		string(in.Mode), string(capsJSON), hash, boolInt(in.Managed), in.Owner, in.Name, now, now))
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if m := in.FirstMessage; m != nil {
		first := *m
		first.SessionID, first.TaskID = id, in.TaskID
		if _, err := appendMessage(ctx, tx, first); err != nil {
			return nil, err
		}
	}
	return sess, nil
}

// defaultCapabilities returns caps, or when nil the defaults: an autopilot
// task's session never asks the operator, and asks its direct parent when
// it has one; other sessions ask the operator unless the agent profile
// turned it off.
func defaultCapabilities(caps []string, agent *kanban.AgentProfile, t *kanban.Task) []string {
	if caps != nil {
		return caps
	}
	if t.Autopilot {
		if t.ParentID != "" {
			return []string{kanban.CapParentQuestion}
		}
		return []string{}
	}
	if agent == nil || agent.UserQuestion {
		return []string{kanban.CapUserQuestion}
	}
	return []string{}
}

// resolveProfiles resolves a new session's agent profile (see
// resolveAgentProfile) and executor profile id (see
// resolveExecutorProfile) for a task of workspaceID: a named profile of
// another workspace is FORBIDDEN (kanban.CheckProfileUse); defaults are
// global. With neither given, both defaults are read in one statement
// when a default agent profile exists.
func resolveProfiles(ctx context.Context, q queryer, agentID, execID, workspaceID string) (*kanban.AgentProfile, string, error) {
	if agentID == "" && execID == "" {
		var exec sql.NullString
		p, err := scanAgentProfile(withExtra{q.QueryRowContext(ctx, `SELECT `+profileColumns+`,
			(SELECT p.id FROM executor_profiles p JOIN executors e ON e.id = p.executor_id
			 WHERE p.is_default = 1 AND p.workspace_id IS NULL ORDER BY `+defaultExecutorOrder+` LIMIT 1)
			FROM agent_profiles WHERE id = (
			SELECT p.id FROM agent_profiles p JOIN agents a ON a.id = p.agent_id
			WHERE p.is_default = 1 AND p.workspace_id IS NULL ORDER BY CASE WHEN a.name = ? THEN 0 ELSE 1 END, a.name LIMIT 1)`, preferredAgent), &exec})
		switch {
		case err == nil:
			return p, exec.String, nil
		case !errors.Is(err, sql.ErrNoRows):
			return nil, "", fmt.Errorf("default profiles: %w", err)
		}
		// No default agent profile: the executor's is read on its own.
	}
	agent, err := resolveAgentProfile(ctx, q, agentID)
	if err != nil {
		return nil, "", err
	}
	if agent != nil {
		if err := kanban.CheckProfileUse(kanban.AgentProfileKind, agent.WorkspaceID, workspaceID); err != nil {
			return nil, "", err
		}
	}
	exec, err := resolveExecutorProfile(ctx, q, execID, workspaceID)
	if err != nil {
		return nil, "", err
	}
	return agent, exec, nil
}

// withExtra scans a row's further columns into extra, after the ones a
// scan function asks for.
type withExtra struct {
	r     rowSource
	extra any
}

func (w withExtra) Scan(dest ...any) error { return w.r.Scan(append(dest, w.extra)...) }

// resolveAgentProfile loads the given profile (NOT_FOUND when missing) or
// the default one; it returns nil when no agent profile exists at all.
func resolveAgentProfile(ctx context.Context, q queryer, id string) (*kanban.AgentProfile, error) {
	if id != "" {
		return getAgentProfile(ctx, q, id)
	}
	p, err := defaultAgentProfile(ctx, q)
	if kanban.ErrorCode(err) == kanban.CodeNotFound {
		return nil, nil
	}
	return p, err
}

// resolveExecutorProfile returns the given profile's id (NOT_FOUND when
// missing, FORBIDDEN when of another workspace than workspaceID) or the
// default one's; "" when no executor profile exists.
func resolveExecutorProfile(ctx context.Context, q queryer, id, workspaceID string) (string, error) {
	if id != "" {
		p, err := getExecutorProfile(ctx, q, id)
		if err != nil {
			return "", err
		}
		if err := kanban.CheckProfileUse(kanban.ExecutorProfileKind, p.WorkspaceID, workspaceID); err != nil {
			return "", err
		}
		return p.ID, nil
	}
	p, err := defaultExecutorProfile(ctx, q)
	if kanban.ErrorCode(err) == kanban.CodeNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return p.ID, nil
}

// GetSession returns a session (NOT_FOUND when missing).
func (s *Store) GetSession(ctx context.Context, id string) (*kanban.Session, error) {
	return getSession(ctx, s.stmts, id)
}

func getSession(ctx context.Context, q queryer, id string) (*kanban.Session, error) {
	row := q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM task_sessions WHERE id = ?`, id)
	sess, err := scanSession(row)
	if err != nil {
		return nil, notFound(err, "session")
	}
	return sess, nil
}

// SessionByToken resolves a session token; an unknown token is UNAUTHORIZED.
func (s *Store) SessionByToken(ctx context.Context, token string) (*kanban.Session, error) {
	if token == "" {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "invalid session token")
	}
	row := s.stmts.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM task_sessions WHERE token_hash = ?`,
		hashSessionToken(token))
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "invalid session token")
	}
	if err != nil {
		return nil, fmt.Errorf("session by token: %w", err)
	}
	return sess, nil
}

// RotateSessionToken replaces a session's token; the old one stops working.
func (s *Store) RotateSessionToken(ctx context.Context, id string) (string, error) {
	token, hash := newSessionToken()
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE task_sessions SET token_hash = ?, updated_at = ? WHERE id = ?`,
			hash, fmtTime(kanban.Now()), id)
		return affectedOne(res, err, "session")
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// affectedOne turns an UPDATE/DELETE result that touched no row into
// NOT_FOUND for kind.
func affectedOne(res sql.Result, err error, kind string) error {
	if err != nil {
		return fmt.Errorf("update %s: %w", kind, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update %s: %w", kind, err)
	}
	if n == 0 {
		return kanban.NotFound(kind)
	}
	return nil
}

// ListSessions lists a task's sessions newest first (NOT_FOUND for a
// missing task).
func (s *Store) ListSessions(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Session], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := taskWorkspaceOf(ctx, s.stmts, taskID); err != nil {
		return nil, err
	}
	return sessionListing.page(ctx, s.stmts, p, `task_id = ?`, taskID)
}

var sessionListing = listing[kanban.Session]{what: "list sessions",
	selectFrom: `SELECT ` + sessionColumns + ` FROM task_sessions`, scan: scanSession,
	cols: []string{"created_at", "id"}, desc: true,
	key: func(x kanban.Session) []any { return []any{fmtTime(x.CreatedAt), x.ID} }}

// SetSessionMode switches a session's MCP mode (VALIDATION_ERROR for a mode
// a session may not have).
func (s *Store) SetSessionMode(ctx context.Context, id string, m kanban.Mode) (*kanban.Session, error) {
	return s.updateSession(ctx, id, `mcp_mode = ?`, string(m))
}

// SetSessionState sets a session's lifecycle state.
func (s *Store) SetSessionState(ctx context.Context, id string, st kanban.SessionState) (*kanban.Session, error) {
	if !slices.Contains(kanban.SessionStates, st) {
		return nil, kanban.FieldError("state", "must be a session state")
	}
	return s.updateSession(ctx, id, `state = ?`, string(st))
}

// CancelSessions cancels a task's live sessions with a note, atomically.
func (s *Store) CancelSessions(ctx context.Context, taskID string, note kanban.Message) ([]kanban.Session, error) {
	return s.cancelLive(ctx, taskID, "", note)
}

// CancelSession cancels one session with a note when it is live; it
// returns the cancelled session, or none when it had already ended.
func (s *Store) CancelSession(ctx context.Context, sessionID string, note kanban.Message) ([]kanban.Session, error) {
	sess, err := s.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return s.cancelLive(ctx, sess.TaskID, sessionID, note)
}

// cancelLive cancels the live sessions of a task (only sessionID when set)
// and appends note to each, then moves the task to the state its managed
// sessions imply, in one transaction.
func (s *Store) cancelLive(ctx context.Context, taskID, sessionID string, note kanban.Message) ([]kanban.Session, error) {
	note.TaskID = taskID
	if err := checkMessageBody(note); err != nil {
		return nil, err
	}
	var out []kanban.Session
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "tasks", "task", taskID); err != nil {
			return err
		}
		ids, err := liveSessionIDs(ctx, tx, taskID, sessionID)
		if err != nil {
			return err
		}
		now := fmtTime(kanban.Now())
		var was []kanban.SessionState // the managed sessions' states before the stop
		for _, id := range ids {
			before, err := getSession(ctx, tx, id)
			if err != nil {
				return err
			}
			if before.Managed {
				was = append(was, before.State)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE task_sessions SET state = ?, updated_at = ?, ended_at = ? WHERE id = ?`,
				string(kanban.SessionCancelled), now, now, id); err != nil {
				return fmt.Errorf("cancel sessions: %w", err)
			}
			note.SessionID = id
			if _, err := appendMessage(ctx, tx, note); err != nil {
				return err
			}
			sess, err := getSession(ctx, tx, id)
			if err != nil {
				return err
			}
			out = append(out, *sess)
		}
		if len(was) > 0 {
			_, err := syncTaskState(ctx, tx, taskID, kanban.StoppedAs(was))
			return err
		}
		return nil
	})
	return out, err
}

// liveSessionIDs lists a task's sessions that have not ended (only
// sessionID when set), oldest first.
func liveSessionIDs(ctx context.Context, tx txn, taskID, sessionID string) ([]string, error) {
	query := `SELECT id FROM task_sessions WHERE task_id = ? AND state NOT IN (?, ?, ?)`
	args := []any{taskID, string(kanban.SessionCompleted), string(kanban.SessionFailed), string(kanban.SessionCancelled)}
	if sessionID != "" {
		query += ` AND id = ?`
		args = append(args, sessionID)
	}
	scan := func(r rowSource) (*string, error) {
		var id string
		return &id, r.Scan(&id)
	}
	ids, err := scanAll(ctx, tx, scan, query+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("cancel sessions: %w", err)
	}
	return ids, nil
}

// updateSession applies a SET clause (our own constant SQL) to one session
// and returns the updated row.
func (s *Store) updateSession(ctx context.Context, id, set string, args ...any) (*kanban.Session, error) {
	var out *kanban.Session
	err := s.tx(ctx, func(tx txn) error {
		args = append(args, fmtTime(kanban.Now()), id)
		res, err := tx.ExecContext(ctx, `UPDATE task_sessions SET `+set+`, updated_at = ? WHERE id = ?`, args...)
		if err := affectedOne(res, err, "session"); err != nil {
			return err
		}
		out, err = getSession(ctx, tx, id)
		return err
	})
	return out, err
}

func scanSession(r rowSource) (*kanban.Session, error) {
	var (
		x                  kanban.Session
		agentID, execID    sql.NullString
		state, mode, caps  string
		attached           int
		attachedAt, detAt  sql.NullString
		createdAt, updated string
		managed            int
		exitCode           sql.NullInt64
		startedAt, endedAt sql.NullString
	)
	if err := r.Scan(&x.ID, &x.TaskID, &x.WorkspaceID, &agentID, &execID, &state, &mode, &caps,
		&attached, &attachedAt, &detAt, &createdAt, &updated,
		&managed, &x.Workdir, &x.AgentSessionID, &exitCode, &x.Error, &startedAt, &endedAt, &x.Name); err != nil {
		return nil, err
	}
	x.Managed = managed != 0
	if exitCode.Valid {
		code := int(exitCode.Int64)
		x.ExitCode = &code
	}
	x.StartedAt, x.EndedAt = parseTimePtr(startedAt), parseTimePtr(endedAt)
	x.AgentProfileID, x.ExecutorProfileID = agentID.String, execID.String
	x.State, x.MCPMode, x.MCPAttached = kanban.SessionState(state), kanban.Mode(mode), attached != 0
	if err := json.Unmarshal([]byte(caps), &x.Capabilities); err != nil {
		return nil, fmt.Errorf("session capabilities: %w", err)
	}
	if x.Capabilities == nil {
		x.Capabilities = []string{}
	}
	x.LastAttachedAt, x.LastDetachedAt = parseTimePtr(attachedAt), parseTimePtr(detAt)
	x.CreatedAt, x.UpdatedAt = parseTime(createdAt), parseTime(updated)
	return &x, nil
}
