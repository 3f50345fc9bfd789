package agent

import (
	"context"
	"errors"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// planModeID is the ACP session mode plan mode switches an agent to when
// it offers one (claude-agent-acp and the mock agent do).
const planModeID acp.SessionModeId = "plan"

// planModeText is the reference product's plan-mode instruction, sent in
// Kandev's system tags as the first block of every prompt while the
// task's plan mode is on.
const planModeText = `<kandev-system>PLAN MODE ACTIVE:
You are in planning mode. Do not implement anything — focus on the plan.

The plan is a shared document that both you and the user can edit. The user may have already written parts of the plan or made edits to your previous version.
Ask the user clarifying questions if anything is unclear or if you need guidance on how to proceed.

WORKFLOW:
1. Read the current plan using the get_task_plan_kandev MCP tool.
2. Build on what already exists. Only replace or discard the user content if it is clearly irrelevant or incorrect.
3. If you need more context to make specific additions, explore the codebase - search for relevant files, read existing code, and understand the patterns in use. Ask questions if needed.
4. Make your additions specific to this project — reference actual file paths, function names, types, and architectural patterns. Avoid adding generic or boilerplate content.
5. Save your changes using the update_task_plan_kandev MCP tool (or create_task_plan_kandev if no plan exists yet).
6. After saving, STOP and wait for the user to review.

When the user sends comments or feedback on the plan, treat them as revision requests:
- Read the current plan, apply the requested changes, and save the updated plan.
- Do NOT start implementing code changes. Stay in planning mode.

This instruction applies to THIS PROMPT ONLY.</kandev-system>`

// sessionModes is what a run knows of its ACP session's modes, and which
// notes it already made in that session (each is made once).
type sessionModes struct {
	offered []acp.SessionMode // nil: the agent offers no modes
	current acp.SessionModeId
	base    acp.SessionModeId // the mode the session started in
	// forced: Kandev switched the mode, and returns it to base when
	// neither plan mode nor a session mode asks for another.
	forced bool
	// pending is the mode a session/set_mode in flight asks for (an
	// agent may announce it before it answers).
	pending   acp.SessionModeId
	refused   map[acp.SessionModeId]bool // set_mode failed for these
	notedPlan bool
	notedMode string
}

func newSessionModes(st *acp.SessionModeState) sessionModes {
	if st == nil {
		return sessionModes{}
	}
	return sessionModes{offered: st.AvailableModes, current: st.CurrentModeId, base: st.CurrentModeId}
}

func (s *sessionModes) offers(id acp.SessionModeId) bool {
	for _, m := range s.offered {
		if m.Id == id {
			return true
		}
	}
	return false
}

// offeredList names the modes the agent offers (at most maxListedModes).
func (s *sessionModes) offeredList() string {
	var ids []string
	for i, m := range s.offered {
		if i == maxListedModes {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, modeName(m.Id))
	}
	return strings.Join(ids, ", ")
}

// maxListedModes bounds the modes a status message lists.
const maxListedModes = 20

// modeName is a mode id as the conversation shows it: the agent chose it,
// so it is bounded.
func modeName[T ~string](id T) string { return kanban.Clip(string(id), kanban.MaxSessionModeLen) }

// want returns the mode the agent should be in for m ("" to leave it as
// it is) and the notes to record about m, each once per ACP session.
func (s *sessionModes) want(m *kanban.AgentMode) (acp.SessionModeId, []string) {
	var notes []string
	if !m.PlanMode {
		s.notedPlan = false
	}
	if m.SessionMode == "" {
		s.notedMode = ""
	}
	if s.offered == nil {
		if m.PlanMode && !s.notedPlan {
			s.notedPlan = true
			notes = append(notes, "Plan mode is on. The agent offers no ACP session modes, so plan mode works through the plan-mode instructions that start each prompt.")
		}
		if m.SessionMode != "" && s.notedMode != m.SessionMode {
			s.notedMode = m.SessionMode
			notes = append(notes, "The agent offers no ACP session modes, so it cannot switch to session mode "+modeName(m.SessionMode)+".")
		}
		return "", notes
	}
	if m.PlanMode {
		if s.offers(planModeID) {
			return planModeID, notes
		}
		if !s.notedPlan {
			s.notedPlan = true
			notes = append(notes, "Plan mode is on. The agent offers no ACP plan mode (it offers: "+s.offeredList()+
				"), so plan mode works through the plan-mode instructions that start each prompt.")
		}
	}
	if id := acp.SessionModeId(m.SessionMode); id != "" {
		if s.offers(id) {
			return id, notes
		}
		if s.notedMode != m.SessionMode {
			s.notedMode = m.SessionMode
			notes = append(notes, "The agent does not offer ACP session mode "+modeName(m.SessionMode)+" (it offers: "+s.offeredList()+").")
		}
	}
	if s.forced && !m.PlanMode {
		return s.base, notes
	}
	return "", notes
}

// reconcile brings the agent in line with the task's agent mode before a
// turn: a context reset that is due, then the ACP session mode. It
// reports whether plan mode is on (the turn's prompt then starts with the
// plan-mode instructions).
func (r *run) reconcile(l *launch) bool {
	ctx := r.ctx
	m, err := r.m.store.AgentMode(ctx, l.task.ID)
	if err != nil {
		if kanban.ErrorCode(err) != kanban.CodeNotFound && !r.stopped() {
			r.m.log.ErrorContext(r.ctx, "read agent mode", "err", err)
		}
		return false
	}
	if m.ResetSessionID == r.id {
		if taken, err := r.m.store.TakeReset(ctx, l.task.ID, r.id); err != nil {
			if !r.stopped() {
				r.m.log.ErrorContext(r.ctx, "take context reset", "err", err)
			}
		} else if taken {
			r.resetContext(l)
		}
	}
	r.applyMode(l, m)
	return m.PlanMode
}

// applyMode switches the agent's ACP session mode to what m asks for.
func (r *run) applyMode(l *launch, m *kanban.AgentMode) {
	t := &r.turn
	t.mu.Lock()
	want, notes := t.modes.want(m)
	cur, refused := t.modes.current, t.modes.refused[want]
	sid := t.agentSID
	switching := want != "" && want != cur && !refused
	if switching {
		t.modes.pending = want
	}
	t.mu.Unlock()
	for _, n := range notes {
		r.rec.note("status", n)
	}
	if !switching {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.m.cfg.StartTimeout)
	defer cancel()
	_, err := l.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sid, ModeId: want})
	t.mu.Lock()
	t.modes.pending = ""
	if err != nil {
		if t.modes.refused == nil {
			t.modes.refused = map[acp.SessionModeId]bool{}
		}
		t.modes.refused[want] = true
	} else {
		t.modes.current, t.modes.forced = want, want != t.modes.base
	}
	t.mu.Unlock()
	if err != nil {
		if !r.stopped() {
			r.rec.note("error", "The agent did not switch to ACP session mode "+modeName(want)+" (session/set_mode): "+r.acpError(l, err)+".")
		}
		return
	}
	r.rec.note("status", "The agent's ACP session mode is now "+modeName(want)+" (it was "+modeName(cur)+").")
}

// agentSwitched records a mode change the agent made by itself.
func (r *run) agentSwitched(sid acp.SessionId, id acp.SessionModeId) {
	t := &r.turn
	t.mu.Lock()
	mine := sid == t.agentSID && id != t.modes.current && id != t.modes.pending
	if mine {
		t.modes.current = id
	}
	t.mu.Unlock()
	if mine {
		r.rec.note("status", "The agent switched its ACP session mode to "+modeName(id)+".")
	}
}

// resetContext gives the agent a fresh ACP session on the same
// connection; the old one is closed when the agent supports that. On
// failure the turn runs in the old session, with an error recorded.
func (r *run) resetContext(l *launch) {
	ctx, cancel := context.WithTimeout(r.ctx, r.m.cfg.StartTimeout)
	defer cancel()
	r.turn.mu.Lock()
	old, servers, canClose := r.turn.agentSID, r.turn.servers, r.turn.canClose
	r.turn.mu.Unlock()
	ns, err := l.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: l.cwd, McpServers: servers})
	if err != nil {
		if !r.stopped() {
			r.rec.note("error", "reset_agent_context: the agent could not start a fresh session (session/new: "+r.acpError(l, err)+
				"); the next turn runs in its previous session.")
		}
		return
	}
	r.openedSession(ns.SessionId, ns.Modes)
	if canClose {
		if _, err := l.conn.CloseSession(ctx, acp.CloseSessionRequest{SessionId: old}); err != nil {
			r.m.log.DebugContext(r.ctx, "close the agent's previous session", "err", err)
		}
	}
	r.rec.note("status", "reset_agent_context: the agent runs in a fresh session (ACP session/new) without the previous conversation's context.")
}

// openedSession records a new ACP session of the run: its id (stored, so
// a restart loads it) and its modes.
func (r *run) openedSession(id acp.SessionId, modes *acp.SessionModeState) {
	r.turn.mu.Lock()
	r.turn.agentSID, r.turn.modes = id, newSessionModes(modes)
	r.turn.mu.Unlock()
	sid := string(id)
	r.m.update(r.ctx, r.id, kanban.RunUpdate{AgentSessionID: &sid})
}

// acpError is an agent's error message, redacted and clipped, for the
// conversation.
func (r *run) acpError(l *launch, err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return kanban.Clip(l.redact.String(re.Message), 300)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within " + r.m.cfg.StartTimeout.String()
	}
	return "the connection failed"
}

// entryModes starts a task's first session in the modes its step's
// on_enter sets when no automation has set any yet (the engine may not
// have run them: the session was created with the task).
func (r *run) entryModes(l *launch) {
	ctx := r.ctx
	m, err := r.m.store.AgentMode(ctx, l.task.ID)
	if err != nil || !m.UpdatedAt.IsZero() {
		return
	}
	t, err := r.m.store.GetTask(ctx, l.task.ID)
	if err != nil {
		return
	}
	step, err := r.m.store.GetStep(ctx, t.WorkflowStepID)
	if err != nil {
		return
	}
	if u, ok := step.EntryModes(); ok {
		if _, _, err := r.m.store.UpdateAgentMode(ctx, t.ID, u); err != nil && !r.stopped() {
			r.m.log.ErrorContext(r.ctx, "set the step's entry modes", "err", err)
		}
	}
}
