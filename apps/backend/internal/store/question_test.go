package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func opts(labels ...string) []kanban.QuestionOption {
	var out []kanban.QuestionOption
	for _, l := range labels {
		out = append(out, kanban.QuestionOption{Label: l, Description: "about " + l})
	}
	return out
}

// twoItems is a valid bundle: a single-select and a multi-select question.
func twoItems() []kanban.QuestionItem {
	return []kanban.QuestionItem{
		{Prompt: "Which database?", Title: "DB", Options: opts("SQLite", "Postgres")},
		{Prompt: "Which features?", MultiSelect: true, Options: opts("Auth", "Search", "Export")},
	}
}

func mustQuestion(t *testing.T, f *fixture) *kanban.Question {
	t.Helper()
	q, _, err := f.s.CreateQuestion(context.Background(), kanban.Question{SessionID: f.sess.ID, Questions: twoItems()}, nil)
	if err != nil {
		t.Fatalf("create question: %v", err)
	}
	return q
}

func TestCreateQuestion(t *testing.T) {
	bothEngines(t, testCreateQuestion)
}

func testCreateQuestion(t *testing.T) {
	f := sessionFixture(t)
	q := mustQuestion(t, f)
	if q.State != kanban.QuestionPending || q.TaskID != f.task.ID || q.WorkspaceID != f.b.ws.ID || q.AnsweredAt != nil {
		t.Fatalf("got question %+v, want pending on task %s workspace %s", q, f.task.ID, f.b.ws.ID)
	}
	if got := []string{q.Questions[0].ID, q.Questions[1].ID}; got[0] != "q1" || got[1] != "q2" {
		t.Fatalf("got item ids %v, want [q1 q2]", got)
	}
	if got := q.Questions[1].Options[2].OptionID; got != "q2_opt3" || q.Kind != kanban.QuestionForUser {
		t.Fatalf("got option id %q kind %q, want q2_opt3 and user", got, q.Kind)
	}
	got, err := f.s.GetQuestion(context.Background(), q.ID)
	if err != nil {
		t.Fatalf("get question: %v", err)
	}
	if !reflect.DeepEqual(got, q) {
		t.Fatalf("got %+v, want %+v", got, q)
	}
	_, err = f.s.GetQuestion(context.Background(), kanban.NewID())
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCreateQuestionRejects(t *testing.T) {
	bothEngines(t, testCreateQuestionRejects)
}

// testCreateQuestionRejects: the rules of a bundle a schema cannot state
// (kanban.PrepareQuestions) and the session's; a bundle's shape is
// question.ask's contract (TestQuestionRulesRefusedOverWebSocket).
func testCreateQuestionRejects(t *testing.T) {
	f := sessionFixture(t)
	with := func(fn func(items []kanban.QuestionItem) []kanban.QuestionItem) []kanban.QuestionItem {
		return fn(twoItems())
	}
	item := twoItems()[0]
	tests := []struct {
		name    string
		session string
		items   []kanban.QuestionItem
		code    kanban.Code
	}{
		{"duplicate labels", "", with(func(it []kanban.QuestionItem) []kanban.QuestionItem { it[0].Options = opts("A", "A"); return it }), kanban.CodeValidation},
		{"duplicate ids", "", with(func(it []kanban.QuestionItem) []kanban.QuestionItem { it[0].ID = "q2"; return it }), kanban.CodeValidation},
		{"duplicate option ids", "", with(func(it []kanban.QuestionItem) []kanban.QuestionItem {
			it[0].Options[0].OptionID, it[0].Options[1].OptionID = "x", "x"
			return it
		}), kanban.CodeValidation},
		{"missing session", "-", twoItems(), kanban.CodeValidation},
		{"unknown session", kanban.NewID(), twoItems(), kanban.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := f.sess.ID
			switch tt.session {
			case "-":
				sess = ""
			case "":
			default:
				sess = tt.session
			}
			before := snapshot(t, f.s)
			_, _, err := f.s.CreateQuestion(context.Background(), kanban.Question{SessionID: sess, Questions: tt.items}, nil)
			wantCode(t, err, tt.code)
			checkSnapshot(t, f.s, before)
		})
	}
	ok := with(func(it []kanban.QuestionItem) []kanban.QuestionItem {
		it[0].Options = opts("A", "B", "C", "D", "E", "F")
		return append(it, item, item)
	})
	ok[2].ID, ok[3].ID = "third", "fourth"
	if _, _, err := f.s.CreateQuestion(context.Background(), kanban.Question{SessionID: f.sess.ID, Questions: ok}, nil); err != nil {
		t.Fatalf("got %v for 4 items with 6 options, want success", err)
	}
}

// The answers of answerCases, to a question with q1 (single-select) and
// q2 (multi-select).
var (
	answerSingle = kanban.Answer{QuestionID: "q1", SelectedOptions: []string{"q1_opt1"}}
	answerMulti  = kanban.Answer{QuestionID: "q2", SelectedOptions: []string{"q2_opt1", "q2_opt3"}}
	answerCustom = kanban.Answer{QuestionID: "q2", CustomText: "none of these"}
)

// answerCases are AnswerQuestion's cases: code "" means success.
var answerCases = []struct {
	name    string
	answers []kanban.Answer
	reject  bool
	reason  string
	code    kanban.Code // "" means success
	field   string
	state   string
}{
	{"select and multi-select", []kanban.Answer{answerSingle, answerMulti}, false, "", "", "", kanban.QuestionAnswered},
	{"custom text", []kanban.Answer{answerCustom, answerSingle}, false, "", "", "", kanban.QuestionAnswered},
	{"reject with reason", nil, true, "not now", "", "", kanban.QuestionRejected},
	{"reject with answers", []kanban.Answer{answerSingle, answerMulti}, true, "", kanban.CodeValidation, "answers", ""},
	{"reason too long", nil, true, strings.Repeat("r", 1001), kanban.CodeValidation, "reject_reason", ""},
	{"reason without rejecting", []kanban.Answer{answerSingle, answerMulti}, false, "why", kanban.CodeValidation, "reject_reason", ""},
	{"unknown question id", []kanban.Answer{answerSingle, {QuestionID: "q3", CustomText: "x"}}, false, "", kanban.CodeValidation, "answers", ""},
	{"duplicate question id", []kanban.Answer{answerSingle, answerSingle, answerMulti}, false, "", kanban.CodeValidation, "answers", ""},
	{"missing an answer", []kanban.Answer{answerSingle}, false, "", kanban.CodeValidation, "answers", ""},
	{"no answers", nil, false, "", kanban.CodeValidation, "answers", ""},
	{"selected and custom text", []kanban.Answer{answerSingle, {QuestionID: "q2", SelectedOptions: []string{"q2_opt1"}, CustomText: "x"}},
		false, "", kanban.CodeValidation, "answers[1]", ""},
	{"neither", []kanban.Answer{answerSingle, {QuestionID: "q2"}}, false, "", kanban.CodeValidation, "answers[1]", ""},
	{"option not offered", []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"sqlite"}}, answerMulti},
		false, "", kanban.CodeValidation, "answers[0].selected_options", ""},
	{"two labels on single-select", []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"q1_opt1", "q1_opt2"}}, answerMulti},
		false, "", kanban.CodeValidation, "answers[0].selected_options", ""},
	{"repeated label", []kanban.Answer{answerSingle, {QuestionID: "q2", SelectedOptions: []string{"q2_opt1", "q2_opt1"}}},
		false, "", kanban.CodeValidation, "answers[1].selected_options", ""},
	{"custom text too long", []kanban.Answer{answerSingle, {QuestionID: "q2", CustomText: strings.Repeat("c", 2001)}},
		false, "", kanban.CodeValidation, "answers[1].custom_text", ""},
}

func TestAnswerQuestion(t *testing.T) {
	bothEngines(t, testAnswerQuestion)
}

func testAnswerQuestion(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	for _, tt := range answerCases {
		t.Run(tt.name, func(t *testing.T) {
			q := mustQuestion(t, f)
			got, claimed, err := f.s.AnswerQuestion(ctx, q.ID, tt.answers, tt.reject, tt.reason)
			if tt.code != "" {
				wantCode(t, err, tt.code)
				if e, _ := kanban.AsError(err); e.Field != tt.field {
					t.Fatalf("got field %q, want %q", e.Field, tt.field)
				}
				if after, _ := f.s.GetQuestion(ctx, q.ID); !reflect.DeepEqual(after, q) {
					t.Fatalf("got %+v after a failed answer, want unchanged %+v", after, q)
				}
				return
			}
			if err != nil || !claimed {
				t.Fatalf("got claimed=%v err=%v, want claimed", claimed, err)
			}
			if got.State != tt.state || got.AnsweredAt == nil || got.RejectReason != tt.reason {
				t.Fatalf("got state %s answered_at %v reason %q, want %s, set, %q", got.State, got.AnsweredAt, got.RejectReason, tt.state, tt.reason)
			}
			if len(tt.answers) > 0 && !reflect.DeepEqual(got.Answers, tt.answers) {
				t.Fatalf("got answers %+v, want %+v", got.Answers, tt.answers)
			}
		})
	}
	_, _, err := f.s.AnswerQuestion(ctx, kanban.NewID(), nil, true, "")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestAnswerQuestionFirstWins(t *testing.T) {
	bothEngines(t, testAnswerQuestionFirstWins)
}

func testAnswerQuestionFirstWins(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	q := mustQuestion(t, f)
	first := []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"q1_opt1"}}, {QuestionID: "q2", CustomText: "first"}}
	if _, claimed, err := f.s.AnswerQuestion(ctx, q.ID, first, false, ""); err != nil || !claimed {
		t.Fatalf("got claimed=%v err=%v, want the first answer to claim", claimed, err)
	}
	// A later answer, even an invalid one or a rejection, returns the stored question unclaimed.
	for _, late := range [][]kanban.Answer{nil, {{QuestionID: "zz"}}} {
		got, claimed, err := f.s.AnswerQuestion(ctx, q.ID, late, late == nil, "")
		if err != nil || claimed {
			t.Fatalf("got claimed=%v err=%v, want unclaimed without error", claimed, err)
		}
		if got.State != kanban.QuestionAnswered || !reflect.DeepEqual(got.Answers, first) {
			t.Fatalf("got %s %+v, want the first answer kept", got.State, got.Answers)
		}
	}
}

func TestAnswerQuestionConcurrent(t *testing.T) {
	bothEngines(t, testAnswerQuestionConcurrent)
}

func testAnswerQuestionConcurrent(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	q := mustQuestion(t, f)
	const n = 8
	type result struct {
		q       *kanban.Question
		claimed bool
		err     error
		answers []kanban.Answer
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers := []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"q1_opt2"}},
				{QuestionID: "q2", CustomText: fmt.Sprintf("answer %d", i)}}
			<-start
			got, claimed, err := f.s.AnswerQuestion(ctx, q.ID, answers, false, "")
			results[i] = result{got, claimed, err, answers}
		}()
	}
	close(start)
	wg.Wait()
	var winners []int
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("goroutine %d: got error %v, want none", i, r.err)
		}
		if r.claimed {
			winners = append(winners, i)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("got %d claimed answers %v, want exactly 1", len(winners), winners)
	}
	want := results[winners[0]].answers
	for i, r := range results {
		if r.q.State != kanban.QuestionAnswered || !reflect.DeepEqual(r.q.Answers, want) {
			t.Fatalf("goroutine %d: got %s %+v, want the winner's answers %+v", i, r.q.State, r.q.Answers, want)
		}
	}
}

// badQuestionFilters are ListQuestions's refused filters and pages.
var badQuestionFilters = []struct {
	name   string
	filter kanban.QuestionFilter
	p      kanban.Page
	field  string
}{
	{"bad created_since", kanban.QuestionFilter{CreatedSince: "yesterday"}, kanban.Page{}, "created_since"},
	{"date without time", kanban.QuestionFilter{CreatedSince: "2026-01-02"}, kanban.Page{}, "created_since"},
	{"bad cursor", kanban.QuestionFilter{}, kanban.Page{Cursor: "%%%"}, "cursor"},
}

// questionIDs is the IDs of the questions filter lists, read two per page
// (ten pages at most).
func questionIDs(t *testing.T, s *Store, filter kanban.QuestionFilter) []string {
	t.Helper()
	var got []string
	p := kanban.Page{Limit: 2}
	for range 10 {
		l, err := s.ListQuestions(context.Background(), filter, p)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, q := range l.Items {
			got = append(got, q.ID)
		}
		if p.Cursor = l.NextCursor; p.Cursor == "" {
			break
		}
	}
	return got
}

func TestListQuestions(t *testing.T) {
	bothEngines(t, testListQuestions)
}

func testListQuestions(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	second := f.newSession(t, f.task.ID)
	var ids []string
	for i := range 5 {
		sess := f.sess.ID
		if i%2 == 1 {
			sess = second.ID
		}
		q, _, err := f.s.CreateQuestion(ctx, kanban.Question{SessionID: sess, Questions: twoItems()}, nil)
		if err != nil {
			t.Fatalf("create question: %v", err)
		}
		ids = append(ids, q.ID)
	}
	if _, _, err := f.s.AnswerQuestion(ctx, ids[0], nil, true, ""); err != nil {
		t.Fatalf("reject: %v", err)
	}
	first, _ := f.s.GetQuestion(ctx, ids[2])
	since := first.CreatedAt.Add(-time.Nanosecond).In(time.FixedZone("X", 3600)).Format(time.RFC3339Nano)
	otherWS := newBoard(t, f.s, "Other")
	tests := []struct {
		name   string
		filter kanban.QuestionFilter
		want   []string
	}{
		{"all", kanban.QuestionFilter{}, ids},
		{"workspace", kanban.QuestionFilter{WorkspaceID: f.b.ws.ID}, ids},
		{"other workspace", kanban.QuestionFilter{WorkspaceID: otherWS.ws.ID}, nil},
		{"session", kanban.QuestionFilter{SessionID: second.ID}, []string{ids[1], ids[3]}},
		{"pending", kanban.QuestionFilter{State: kanban.QuestionPending}, ids[1:]},
		{"rejected", kanban.QuestionFilter{State: kanban.QuestionRejected}, ids[:1]},
		{"created since", kanban.QuestionFilter{CreatedSince: since}, ids[2:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := questionIDs(t, f.s, tt.filter); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	for _, tt := range badQuestionFilters {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.s.ListQuestions(ctx, tt.filter, tt.p)
			wantCode(t, err, kanban.CodeValidation)
			if e, _ := kanban.AsError(err); e.Field != tt.field {
				t.Fatalf("got field %q, want %q", e.Field, tt.field)
			}
		})
	}
}

// TestParentQuestion: a parent question is created with its delivery in
// one transaction, cannot be answered as a user question, and its reply is
// recorded and delivered exactly once.
func TestParentQuestion(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	parent := f.newSession(t, f.task.ID)
	before := snapshot(t, f.s)
	_, _, err := f.s.CreateQuestion(ctx, kanban.Question{Kind: "boss", SessionID: f.sess.ID, Questions: twoItems()}, nil)
	wantCode(t, err, kanban.CodeValidation)
	checkSnapshot(t, f.s, before)
	q, m, err := f.s.CreateQuestion(ctx, kanban.Question{ID: kanban.NewID(), Kind: kanban.QuestionForParent, SessionID: f.sess.ID,
		Context: "We ship Friday.", Questions: twoItems()}, func(q *kanban.Question) *kanban.Message {
		return &kanban.Message{SessionID: parent.ID, TaskID: f.task.ID, Author: "task:x", Type: "prompt", Content: "answer " + q.ID}
	})
	if err != nil || m == nil || m.Content != "answer "+q.ID || q.Context != "We ship Friday." {
		t.Fatalf("got %+v, %+v, %v; want the question and its delivery", q, m, err)
	}
	_, _, err = f.s.AnswerQuestion(ctx, q.ID, nil, true, "")
	wantCode(t, err, kanban.CodeConflict)
	l, err := f.s.ListQuestions(ctx, kanban.QuestionFilter{Kind: kanban.QuestionForUser}, kanban.Page{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("got %v, %v listing user questions, want none", l, err)
	}
	deliver := kanban.Message{SessionID: f.sess.ID, TaskID: f.task.ID, Author: "task:p", Type: "prompt", Content: "Use SQLite."}
	_, _, _, err = f.s.ReplyParentQuestion(ctx, q.ID, "", deliver)
	wantCode(t, err, kanban.CodeValidation)
	got, dm, claimed, err := f.s.ReplyParentQuestion(ctx, q.ID, "Use SQLite.", deliver)
	if err != nil || !claimed || dm == nil || got.State != kanban.QuestionAnswered || got.Reply != "Use SQLite." {
		t.Fatalf("got %+v %+v claimed=%v err=%v, want the reply recorded and delivered", got, dm, claimed, err)
	}
	before = snapshot(t, f.s)
	got, dm, claimed, err = f.s.ReplyParentQuestion(ctx, q.ID, "Use Postgres.", deliver)
	if err != nil || claimed || dm != nil || got.Reply != "Use SQLite." {
		t.Fatalf("got %+v %+v claimed=%v err=%v, want the first reply kept and nothing delivered", got, dm, claimed, err)
	}
	checkSnapshot(t, f.s, before)
}
