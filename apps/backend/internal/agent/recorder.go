package agent

import (
	"context"
	"encoding/json"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
	"log/slog"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Recording bounds: what one agent can make Kandev store.
const (
	// maxMessageBytes bounds one recorded message (a streamed agent
	// message, a thought); what follows is dropped with a marker.
	maxMessageBytes = 64 << 10
	// maxToolIOBytes bounds the input and the output kept of a tool call.
	maxToolIOBytes = 8 << 10
	// flushInterval is how often a growing streamed message is saved and
	// re-published.
	flushInterval = 150 * time.Millisecond
	truncMark     = "\n[truncated]"
)

// recorder turns a session's ACP updates into conversation messages:
// streamed chunks are coalesced into one message per run of the same kind
// (saved as it grows, at most every flushInterval), a tool call is one
// message updated as its status changes, a plan one message per turn. The
// session's total is bounded by limit bytes; past it, one status message
// says so and the rest is not stored.
type recorder struct {
	// ctx is the context of every write: the run's, without its
	// cancellation (what the agent said is recorded to the end).
	ctx     context.Context
	store   kanban.Store
	publish func(ctx context.Context, m *kanban.Message)
	log     *slog.Logger
	session string
	limit   int

	mu      sync.Mutex
	turn    int
	total   int
	full    bool
	cur     *streamed // the message being streamed, if any
	tools   map[string]*toolCall
	plan    *kanban.Message
	stopped chan struct{}
}

// streamed is a message that grows chunk by chunk.
type streamed struct {
	msg   *kanban.Message
	text  strings.Builder
	dirty bool
	cut   bool
}

// toolCall is what is kept of one tool call, as its message's JSON.
type toolCall struct {
	msg    *kanban.Message
	record toolRecord
}

type toolRecord struct {
	ToolCallID string `json:"tool_call_id"`
	Title      string `json:"title"`
	Kind       string `json:"kind,omitempty"`
	Status     string `json:"status"`
	Input      string `json:"input,omitempty"`
	Output     string `json:"output,omitempty"`
}

func newRecorder(ctx context.Context, st kanban.Store, sessionID string, limit int, log *slog.Logger,
	publish func(context.Context, *kanban.Message)) *recorder {
	r := &recorder{ctx: ctx, store: st, session: sessionID, limit: limit, log: log, publish: publish,
		tools: map[string]*toolCall{}, stopped: make(chan struct{})}
	go r.flushLoop()
	return r
}

// close flushes what is pending and stops the flusher.
func (r *recorder) close() {
	r.mu.Lock()
	select {
	case <-r.stopped:
	default:
		close(r.stopped)
	}
	r.endStreamLocked()
	r.mu.Unlock()
}

func (r *recorder) flushLoop() {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stopped:
			return
		case <-t.C:
			r.mu.Lock()
			r.flushLocked()
			r.mu.Unlock()
		}
	}
}

// startTurn numbers the messages of the next turn.
func (r *recorder) startTurn(turn int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStreamLocked()
	r.turn, r.plan = turn, nil
}

// endTurn saves what is still streaming.
func (r *recorder) endTurn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStreamLocked()
}

// update records one session/update.
func (r *recorder) update(u acp.SessionUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		r.chunkLocked("message", u.AgentMessageChunk.Content)
	case u.AgentThoughtChunk != nil:
		r.chunkLocked("thought", u.AgentThoughtChunk.Content)
	case u.ToolCall != nil:
		tc := u.ToolCall
		r.toolLocked(string(tc.ToolCallId), func(rec *toolRecord) {
			rec.Title, rec.Kind, rec.Status = tc.Title, string(tc.Kind), string(tc.Status)
			setIO(&rec.Input, tc.RawInput)
			setIO(&rec.Output, tc.RawOutput)
			if rec.Output == "" {
				rec.Output = toolContentText(tc.Content)
			}
		})
	case u.ToolCallUpdate != nil:
		tc := u.ToolCallUpdate
		r.toolLocked(string(tc.ToolCallId), func(rec *toolRecord) {
			if tc.Title != nil {
				rec.Title = *tc.Title
			}
			if tc.Kind != nil {
				rec.Kind = string(*tc.Kind)
			}
			if tc.Status != nil {
				rec.Status = string(*tc.Status)
			}
			setIO(&rec.Input, tc.RawInput)
			setIO(&rec.Output, tc.RawOutput)
			if text := toolContentText(tc.Content); text != "" && tc.RawOutput == nil {
				rec.Output = text
			}
		})
	case u.Plan != nil:
		r.planLocked(u.Plan.Entries)
	}
	// Commands, modes, config options and session info are not part of
	// the conversation; usage updates are recorded apart (usage.go).
}

// note records a status or error message of the runtime itself and
// returns it (nil when it could not be recorded).
func (r *recorder) note(typ, content string) *kanban.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endStreamLocked()
	return r.appendLocked(typ, "kandev", content)
}

func (r *recorder) chunkLocked(typ string, c acp.ContentBlock) {
	text := blockText(c)
	if text == "" {
		return
	}
	if r.cur != nil && r.cur.msg.Type != typ {
		r.endStreamLocked()
	}
	if r.cur == nil {
		m := r.appendLocked(typ, "agent", kanban.Clip(text, maxMessageBytes))
		if m == nil {
			return
		}
		r.cur = &streamed{msg: m}
		r.cur.text.WriteString(m.Content)
		r.cur.cut = len(text) > maxMessageBytes
		return
	}
	if r.cur.cut {
		return
	}
	room := maxMessageBytes - r.cur.text.Len()
	if len(text) > room {
		text, r.cur.cut = kanban.Clip(text, room), true
	}
	if !r.charge(len(text)) {
		return
	}
	r.cur.text.WriteString(text)
	r.cur.dirty = true
}

// endStreamLocked saves and closes the streamed message.
func (r *recorder) endStreamLocked() {
	if r.cur == nil {
		return
	}
	if r.cur.cut {
		r.cur.text.WriteString(truncMark)
		r.cur.dirty = true
	}
	r.flushLocked()
	r.cur = nil
}

func (r *recorder) flushLocked() {
	if r.cur == nil || !r.cur.dirty {
		return
	}
	r.cur.dirty = false
	r.saveLocked(r.cur.msg, r.cur.text.String())
}

func (r *recorder) toolLocked(id string, apply func(*toolRecord)) {
	r.endStreamLocked()
	tc := r.tools[id]
	if tc == nil {
		tc = &toolCall{record: toolRecord{ToolCallID: kanban.Clip(id, 200), Status: "pending"}}
	}
	apply(&tc.record)
	tc.record.Title = kanban.Clip(tc.record.Title, 500)
	b, err := json.Marshal(tc.record)
	if err != nil {
		return
	}
	if tc.msg == nil {
		if tc.msg = r.appendLocked("tool_call", "agent", string(b)); tc.msg != nil && len(r.tools) < 10_000 {
			r.tools[id] = tc
		}
		return
	}
	if r.charge(len(b)) {
		r.saveLocked(tc.msg, string(b))
	}
}

func (r *recorder) planLocked(entries []acp.PlanEntry) {
	r.endStreamLocked()
	out := make([]map[string]string, 0, min(len(entries), 100))
	for i, e := range entries {
		if i == 100 {
			break
		}
		out = append(out, map[string]string{"content": kanban.Clip(e.Content, 1000),
			"priority": string(e.Priority), "status": string(e.Status)})
	}
	b, err := json.Marshal(map[string]any{"entries": out})
	if err != nil {
		return
	}
	if r.plan == nil {
		r.plan = r.appendLocked("plan", "agent", string(b))
		return
	}
	if r.charge(len(b)) {
		r.saveLocked(r.plan, string(b))
	}
}

// appendLocked stores a new message (nil when over the limit or failed).
func (r *recorder) appendLocked(typ, author, content string) *kanban.Message {
	if !r.charge(len(content)) {
		return nil
	}
	m, err := r.store.AppendMessage(r.ctx, kanban.Message{SessionID: r.session, Author: author,
		Type: typ, Content: content, Turn: r.turn})
	if err != nil {
		r.log.Warn("record agent message", logctx.SessionKey, r.session, "err", err)
		return nil
	}
	r.publish(r.ctx, m)
	return m
}

func (r *recorder) saveLocked(m *kanban.Message, content string) {
	saved, err := r.store.UpdateMessage(r.ctx, m.ID, content)
	if err != nil {
		r.log.Warn("record agent message", logctx.SessionKey, r.session, "err", err)
		return
	}
	*m = *saved
	r.publish(r.ctx, saved)
}

// charge counts n more bytes against the session's limit; past it, one
// status message is recorded and false returned from then on.
func (r *recorder) charge(n int) bool {
	if r.full {
		return false
	}
	if r.total+n <= r.limit {
		r.total += n
		return true
	}
	r.full = true
	m, err := r.store.AppendMessage(r.ctx, kanban.Message{SessionID: r.session, Author: "kandev",
		Type: "status", Turn: r.turn,
		Content: "The agent's output reached this session's recording limit; further output is not recorded."})
	if err == nil {
		r.publish(r.ctx, m)
	}
	return false
}

// blockText is the text of a content block (other kinds are named).
func blockText(c acp.ContentBlock) string {
	switch {
	case c.Text != nil:
		return c.Text.Text
	case c.Image != nil:
		return "[image]"
	case c.Audio != nil:
		return "[audio]"
	case c.ResourceLink != nil:
		return "[resource " + kanban.Clip(c.ResourceLink.Uri, 500) + "]"
	case c.Resource != nil:
		return "[resource]"
	}
	return ""
}

// toolContentText is the text of a tool call's content, bounded.
func toolContentText(cs []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		switch {
		case c.Content != nil:
			b.WriteString(blockText(c.Content.Content))
		case c.Diff != nil:
			b.WriteString("[diff " + kanban.Clip(c.Diff.Path, 500) + "]")
		case c.Terminal != nil:
			b.WriteString("[terminal]")
		}
		if b.Len() > maxToolIOBytes {
			break
		}
	}
	return clipIO(b.String())
}

// setIO stores v (raw tool input or output) as bounded JSON text.
func setIO(dst *string, v any) {
	if v == nil {
		return
	}
	if s, ok := v.(string); ok {
		*dst = clipIO(s)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	*dst = clipIO(string(b))
}

func clipIO(s string) string {
	if len(s) <= maxToolIOBytes {
		return s
	}
	return kanban.Clip(s, maxToolIOBytes) + truncMark
}
