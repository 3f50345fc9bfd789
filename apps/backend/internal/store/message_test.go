package store

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// appendN appends n messages of type typ to sess and returns their contents.
func appendN(t *testing.T, s *Store, sess *kanban.Session, n int, typ string, prefix string) []string {
	t.Helper()
	var out []string
	for i := range n {
		content := prefix + string(rune('a'+i))
		if _, err := s.AppendMessage(context.Background(), kanban.Message{SessionID: sess.ID, Author: "agent",
			Type: typ, Content: content, Turn: i}); err != nil {
			t.Fatalf("append message: %v", err)
		}
		out = append(out, content)
	}
	return out
}

func contents(l *kanban.List[kanban.Message]) []string {
	var out []string
	for _, m := range l.Items {
		out = append(out, m.Content)
	}
	return out
}

func TestAppendMessageSeqPerTask(t *testing.T) {
	bothEngines(t, testAppendMessageSeqPerTask)
}

func testAppendMessageSeqPerTask(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	second := f.newSession(t, f.task.ID)
	other := mustTask(t, f.s, f.b, "", "Other")
	otherSess := f.newSession(t, other.ID)
	for _, sess := range []*kanban.Session{f.sess, second, f.sess, otherSess} {
		m, err := f.s.AppendMessage(ctx, kanban.Message{SessionID: sess.ID, Author: "user", Type: "prompt", Content: "hi"})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		if m.TaskID != sess.TaskID || m.ID == "" || m.CreatedAt.IsZero() {
			t.Fatalf("got message %+v, want task %s, an id and a time", m, sess.TaskID)
		}
	}
	seqs := func(taskID string) []int {
		rows, err := f.s.stmts.QueryContext(ctx, `SELECT seq FROM session_messages WHERE task_id = ? ORDER BY seq`, taskID)
		if err != nil {
			t.Fatalf("seqs: %v", err)
		}
		defer rows.Close()
		var out []int
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatalf("seqs: %v", err)
			}
			out = append(out, n)
		}
		return out
	}
	if got := seqs(f.task.ID); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("got seqs %v for the task, want [1 2 3]", got)
	}
	if got := seqs(other.ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("got seqs %v for the other task, want [1]", got)
	}
}

func TestAppendMessageRejects(t *testing.T) {
	bothEngines(t, testAppendMessageRejects)
}

func testAppendMessageRejects(t *testing.T) {
	f := sessionFixture(t)
	other := mustTask(t, f.s, f.b, "", "Other")
	ok := kanban.Message{SessionID: f.sess.ID, Author: "agent", Type: "message", Content: "x"}
	with := func(fn func(m *kanban.Message)) kanban.Message { m := ok; fn(&m); return m }
	tests := []struct {
		name string
		in   kanban.Message
		code kanban.Code
	}{
		{"missing session", with(func(m *kanban.Message) { m.SessionID = "" }), kanban.CodeValidation},
		{"unknown session", with(func(m *kanban.Message) { m.SessionID = kanban.NewID() }), kanban.CodeNotFound},
		{"missing author", with(func(m *kanban.Message) { m.Author = "" }), kanban.CodeValidation},
		{"unknown type", with(func(m *kanban.Message) { m.Type = "messages" }), kanban.CodeValidation},
		{"empty type", with(func(m *kanban.Message) { m.Type = "" }), kanban.CodeValidation},
		{"content over the limit", with(func(m *kanban.Message) { m.Content = strings.Repeat("é", kanban.MaxContentLen+1) }),
			kanban.CodeValidation},
		{"invalid utf-8", with(func(m *kanban.Message) { m.Content = "\xff" }), kanban.CodeValidation},
		{"negative turn", with(func(m *kanban.Message) { m.Turn = -1 }), kanban.CodeValidation},
		{"task of another session", with(func(m *kanban.Message) { m.TaskID = other.ID }), kanban.CodeValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			_, err := f.s.AppendMessage(context.Background(), tt.in)
			wantCode(t, err, tt.code)
			checkSnapshot(t, f.s, before)
		})
	}
	m, err := f.s.AppendMessage(context.Background(), with(func(m *kanban.Message) {
		m.Content = strings.Repeat("é", kanban.MaxContentLen)
	}))
	if err != nil || m.Content == "" {
		t.Fatalf("got %v for content at the limit, want success", err)
	}
}

func TestListMessagesCursors(t *testing.T) {
	bothEngines(t, testListMessagesCursors)
}

func testListMessagesCursors(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	all := appendN(t, f.s, f.sess, 7, "message", "m") // ma..mg, seq 1..7
	rev := slices.Clone(all)
	slices.Reverse(rev)

	walk := func(t *testing.T, base kanban.MessageFilter) []string {
		t.Helper()
		var got []string
		for range 10 {
			l, err := f.s.ListMessages(ctx, base)
			if err != nil {
				t.Fatalf("list messages: %v", err)
			}
			if len(l.Items) > base.Limit {
				t.Fatalf("got %d items, want at most %d", len(l.Items), base.Limit)
			}
			got = append(got, contents(l)...)
			if l.NextCursor == "" {
				return got
			}
			if base.Desc {
				base.Before = l.NextCursor
			} else {
				base.After = l.NextCursor
			}
		}
		t.Fatalf("pagination did not end")
		return nil
	}
	t.Run("ascending", func(t *testing.T) {
		if got := walk(t, kanban.MessageFilter{TaskID: f.task.ID, Limit: 3}); !slices.Equal(got, all) {
			t.Fatalf("got %v, want %v", got, all)
		}
	})
	t.Run("descending", func(t *testing.T) {
		if got := walk(t, kanban.MessageFilter{TaskID: f.task.ID, Limit: 3, Desc: true}); !slices.Equal(got, rev) {
			t.Fatalf("got %v, want %v", got, rev)
		}
	})

	// A cursor taken from a descending page after "mf" (seq 6) points at seq 5.
	l, err := f.s.ListMessages(ctx, kanban.MessageFilter{TaskID: f.task.ID, Limit: 3, Desc: true})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	atSeq5 := l.NextCursor // last item is "me" (seq 5)
	l, err = f.s.ListMessages(ctx, kanban.MessageFilter{TaskID: f.task.ID, Limit: 1})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	atSeq1 := l.NextCursor
	tests := []messageListCase{
		{"after seq 5 ascending", kanban.MessageFilter{After: atSeq5}, all[5:]},
		{"after seq 5 descending", kanban.MessageFilter{After: atSeq5, Desc: true}, rev[:2]},
		{"before seq 5 ascending", kanban.MessageFilter{Before: atSeq5}, all[:4]},
		{"before seq 5 descending", kanban.MessageFilter{Before: atSeq5, Desc: true}, rev[3:]},
		{"between seq 1 and 5", kanban.MessageFilter{After: atSeq1, Before: atSeq5}, all[1:4]},
		{"before seq 5 newest two", kanban.MessageFilter{Before: atSeq5, Desc: true, Limit: 2}, rev[3:5]},
	}
	f.checkLists(t, tests)
}

func TestListMessagesFilters(t *testing.T) {
	bothEngines(t, testListMessagesFilters)
}

func testListMessagesFilters(t *testing.T) {
	f := sessionFixture(t)
	second := f.newSession(t, f.task.ID)
	msgs := appendN(t, f.s, f.sess, 2, "message", "m")
	calls := appendN(t, f.s, second, 2, "tool_call", "c")
	errs := appendN(t, f.s, f.sess, 1, "error", "e")
	tests := []messageListCase{
		{"all", kanban.MessageFilter{}, slices.Concat(msgs, calls, errs)},
		{"one session", kanban.MessageFilter{SessionID: f.sess.ID}, slices.Concat(msgs, errs)},
		{"one type", kanban.MessageFilter{Types: []string{"tool_call"}}, calls},
		{"two types", kanban.MessageFilter{Types: []string{"error", "message"}}, slices.Concat(msgs, errs)},
		{"session and type", kanban.MessageFilter{SessionID: second.ID, Types: []string{"message"}}, nil},
	}
	f.checkLists(t, tests)
}

// messageListCase is one listing of the fixture task's conversation: f
// without its TaskID, and the contents it must return in order.
type messageListCase struct {
	name string
	f    kanban.MessageFilter
	want []string
}

// checkLists runs each listing against the fixture's task.
func (f *fixture) checkLists(t *testing.T, tests []messageListCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.TaskID = f.task.ID
			l, err := f.s.ListMessages(context.Background(), tt.f)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := contents(l); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestListMessagesRejects(t *testing.T) {
	bothEngines(t, testListMessagesRejects)
}

func testListMessagesRejects(t *testing.T) {
	f := sessionFixture(t)
	tests := []struct {
		name string
		f    kanban.MessageFilter
		code kanban.Code
	}{
		{"missing task", kanban.MessageFilter{}, kanban.CodeValidation},
		{"unknown task", kanban.MessageFilter{TaskID: kanban.NewID()}, kanban.CodeNotFound},
		{"unknown type", kanban.MessageFilter{TaskID: f.task.ID, Types: []string{"message", "thoughts"}}, kanban.CodeValidation},
		{"bad before cursor", kanban.MessageFilter{TaskID: f.task.ID, Before: "zzz"}, kanban.CodeValidation},
		{"bad after cursor", kanban.MessageFilter{TaskID: f.task.ID, After: encodeCursor(messageCursor, "x", "y")}, kanban.CodeValidation},
		{"limit over max", kanban.MessageFilter{TaskID: f.task.ID, Limit: kanban.MaxLimit + 1}, kanban.CodeValidation},
		{"negative limit", kanban.MessageFilter{TaskID: f.task.ID, Limit: -1}, kanban.CodeValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.s.ListMessages(context.Background(), tt.f)
			wantCode(t, err, tt.code)
		})
	}
}

func TestListMessagesDefaultLimit(t *testing.T) {
	bothEngines(t, testListMessagesDefaultLimit)
}

func testListMessagesDefaultLimit(t *testing.T) {
	f := sessionFixture(t)
	appendN(t, f.s, f.sess, 3, "status", "s")
	ctx := context.Background()
	// Fill past the default page size cheaply inside one transaction.
	err := f.s.tx(ctx, func(tx txn) error {
		for i := range kanban.DefaultLimit {
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_messages (id, seq, session_id, task_id, author, type,
				content, turn, created_at) VALUES (?, ?, ?, ?, 'agent', 'message', 'x', 0, ?)`,
				kanban.NewID(), 100+i, f.sess.ID, f.task.ID, fmtTime(kanban.Now())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	l, err := f.s.ListMessages(ctx, kanban.MessageFilter{TaskID: f.task.ID})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(l.Items) != kanban.DefaultLimit || l.NextCursor == "" {
		t.Fatalf("got %d items, cursor %q, want %d and a cursor", len(l.Items), l.NextCursor, kanban.DefaultLimit)
	}
}
