package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// A commit message written by the task's agent: task.commit with
// message_from_agent sends the task's live agent session one prompt — the
// changes to commit (at most commitMsgFiles files with their +/- counts)
// and the operator's instructions — and waits, at most wait_seconds, for
// the turn that delivers it to end. The agent's last message of that turn
// is the commit message. A timeout, a turn that ends otherwise, an empty
// or oversized answer, or one holding a server credential commits
// nothing.

// Bounds of the agent's commit message round trip.
const (
	commitMsgFiles  = 50 // changed files listed in the prompt
	commitMsgAuthor = "kandev"
	commitMsgMarker = "Kandev asks for a commit message (task.commit)."
)

// turnWaiters wakes the calls waiting for a session's turn to end (the
// runtime's kanban.TurnEvent, on this backend's domain events).
type turnWaiters struct {
	mu sync.Mutex
	m  map[string]map[chan kanban.TurnEvent]struct{}
}

// wait registers a waiter for session id's turn ends; cancel removes it.
func (w *turnWaiters) wait(id string) (<-chan kanban.TurnEvent, func()) {
	ch := make(chan kanban.TurnEvent, 4)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]map[chan kanban.TurnEvent]struct{}{}
	}
	if w.m[id] == nil {
		w.m[id] = map[chan kanban.TurnEvent]struct{}{}
	}
	w.m[id][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.m[id], ch)
		if len(w.m[id]) == 0 {
			delete(w.m, id)
		}
	}
}

// react is the domain-event reaction: an ended turn wakes its session's
// waiters (never blocking the emitter).
func (w *turnWaiters) react(ev kanban.DomainEvent) {
	te, ok := ev.(kanban.TurnEvent)
	if !ok || !te.Ended {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.m[te.SessionID] {
		select {
		case ch <- te:
		default:
		}
	}
}

// checkCommitMessageSource checks task.commit's message or
// message_from_agent (exactly one) and what goes with the latter.
func checkCommitMessageSource(in CommitIn) error {
	switch {
	case in.MessageFromAgent && in.Message != "":
		return kanban.FieldError("message", "give a message or message_from_agent: true, not both")
	case !in.MessageFromAgent && in.Message == "":
		return kanban.FieldError("message", "is required (or message_from_agent: true to have the task's agent write it)")
	case !in.MessageFromAgent && (in.Instructions != "" || in.WaitSeconds != 0):
		return kanban.FieldError("instructions", "instructions and wait_seconds go with message_from_agent: true")
	}
	return nil
}

// agentCommitMessage asks the task's agent for the commit message of the
// tree's changes (limited to paths when given) and returns it.
func (s *Service) agentCommitMessage(ctx context.Context, taskID string, tree *worktree.Tree, in CommitIn) (string, error) {
	sess, err := s.liveSession(ctx, taskID, "")
	if err != nil {
		return "", kanban.Errorf(kanban.CodeConflict, "no agent session is running on the task to write the commit message; start one or give message")
	}
	prompt, err := commitMessagePrompt(ctx, tree, in)
	if err != nil {
		return "", err
	}
	wait := time.Duration(in.WaitSeconds) * time.Second
	if in.WaitSeconds == 0 {
		wait = kanban.DefaultCommitMessageWait * time.Second
	}
	ended, cancel := s.turns.wait(sess.ID)
	defer cancel()
	sent, err := s.SendPrompt(ctx, taskID, commitMsgAuthor, prompt)
	if err != nil {
		return "", err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", kanban.Errorf(kanban.CodeUnavailable, "the commit was abandoned while the agent wrote its message; nothing was committed")
		case <-timer.C:
			return "", kanban.Errorf(kanban.CodeUnavailable, "the agent wrote no commit message within wait_seconds; nothing was committed")
		case te := <-ended:
			if te.StartedAt.Before(sent.CreatedAt) {
				continue // a turn that was running before the request: ours is next
			}
			if te.StopReason != "end_turn" {
				return "", kanban.Errorf(kanban.CodeUnavailable, "the agent's turn ended (%s) without a commit message; nothing was committed", te.StopReason)
			}
			return s.replyTo(ctx, sent, te.StartedAt)
		}
	}
}

// replyTo returns the agent's last message of the turn that answered
// prompt (the first turn started at or after started: an earlier turn
// may have recorded messages after the prompt too), cleaned up as a
// commit message.
func (s *Service) replyTo(ctx context.Context, prompt *kanban.Message, started time.Time) (string, error) {
	started = started.Truncate(time.Microsecond) // the store's precision
	l, err := s.store.ListMessages(ctx, kanban.MessageFilter{TaskID: prompt.TaskID, SessionID: prompt.SessionID,
		Types: []string{"message", "prompt"}, Desc: true, Limit: kanban.MaxLimit})
	if err != nil {
		return "", err
	}
	var reply []kanban.Message // newest first, down to the prompt
	for _, m := range l.Items {
		if m.ID == prompt.ID {
			break
		}
		if m.Type == "message" && !m.CreatedAt.Before(started) {
			reply = append(reply, m)
		}
	}
	msg := ""
	if n := len(reply); n > 0 {
		turn := reply[n-1].Turn // the answering turn: the first after the prompt
		for _, m := range reply {
			if m.Turn == turn {
				msg = m.Content
				break
			}
		}
	}
	return cleanCommitMessage(msg)
}

// cleanCommitMessage trims the agent's answer and drops a code fence
// around it; empty or over kanban.MaxCommitMessageBytes is refused.
func cleanCommitMessage(msg string) (string, error) {
	msg = strings.TrimSpace(msg)
	if len(msg) >= 6 && strings.HasPrefix(msg, "```") && strings.HasSuffix(msg, "```") {
		inner := msg[3 : len(msg)-3]
		// A first line of one word (or none) is the fence's language tag.
		if i := strings.IndexByte(inner, '\n'); i >= 0 && !strings.ContainsAny(strings.TrimSpace(inner[:i]), " \t") {
			inner = inner[i+1:]
		}
		msg = strings.TrimSpace(inner)
	}
	switch {
	case msg == "":
		return "", kanban.Errorf(kanban.CodeUnavailable, "the agent's answer holds no commit message; nothing was committed")
	case len(msg) > kanban.MaxCommitMessageBytes:
		return "", kanban.Errorf(kanban.CodeUnavailable, "the agent's commit message is longer than %d bytes; nothing was committed", kanban.MaxCommitMessageBytes)
	}
	return msg, nil
}

// commitMessagePrompt is the prompt asking for the message: the changes
// the commit takes (bounded), then the operator's instructions.
func commitMessagePrompt(ctx context.Context, tree *worktree.Tree, in CommitIn) (string, error) {
	ch, err := tree.Changes(ctx, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(commitMsgMarker + "\n\nWrite the commit message for these uncommitted changes of your working tree " +
		"(branch " + quoted(tree.Branch()) + "). Do not run git and change no file: Kandev commits them itself. " +
		"Reply with the commit message only: a subject line of at most 72 characters, then a blank line and a " +
		"short body if it helps.\n\nChanged files:\n")
	n, more := 0, 0
	for _, c := range ch.Items {
		if !c.Staged && !c.Unstaged && !c.Untracked || len(in.Paths) > 0 && !inPaths(c, in.Paths) {
			continue
		}
		if n == commitMsgFiles {
			more++
			continue
		}
		n++
		fmt.Fprintf(&b, "- %s %s (+%d -%d)\n", c.Status, quoted(c.Path), c.Additions, c.Deletions)
	}
	if more > 0 || ch.NextCursor != "" {
		b.WriteString("- … and more files\n")
	}
	if n == 0 && ch.NextCursor == "" {
		return "", kanban.Errorf(kanban.CodeConflict, "there is nothing to commit")
	}
	if in.Instructions != "" {
		b.WriteString("\nThe operator's instructions for the message:\n" + in.Instructions + "\n")
	}
	return b.String(), nil
}

// inPaths reports whether a change is among the chosen paths.
func inPaths(c worktree.Change, paths []string) bool {
	for _, p := range paths {
		if p == c.Path || p == c.OldPath {
			return true
		}
	}
	return false
}

// quoted shows a name as is when it is plain printable text, else Go-quoted
// (a file name cannot add lines to the prompt).
func quoted(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
