package store

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// prFixture is a task linked to a repository, ready for pull requests.
type prFixture struct {
	b    board
	task *kanban.Task
	repo *kanban.Repository
}

func newPRFixture(t *testing.T, s *Store) prFixture {
	t.Helper()
	ctx := context.Background()
	b := newBoard(t, s, "Ship")
	repo := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, Name: "app", RemoteURL: "https://github.com/octo/app.git"}))(t)
	task := mustTask(t, s, b, "", "Ship it")
	must(s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID}))(t)
	return prFixture{b: b, task: task, repo: repo}
}

func (f prFixture) pr(n int) kanban.PullRequest {
	return kanban.PullRequest{TaskID: f.task.ID, RepositoryID: f.repo.ID, Forge: kanban.ForgeGitHub, ForgeRepo: "octo/app",
		Number: n, URL: "https://github.com/octo/app/pull/" + strconv.Itoa(n), Title: "Ship it", HeadBranch: "kandev/x", BaseBranch: "main",
		State: kanban.PROpen, HeadSHA: shaA}
}

func TestLinkPullRequest(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		pr := must(s.LinkPullRequest(ctx, f.pr(7)))(t)
		if pr.ID == "" || pr.State != kanban.PROpen || pr.Checks != kanban.ChecksNone || pr.Review != kanban.ReviewNone ||
			pr.Options != (kanban.PROptions{}) || pr.Watch.NextPollAt.IsZero() || pr.Watch.RequestedReviewers != nil || pr.Mergeable != nil {
			t.Fatalf("linked %+v", pr)
		}
		// Linking the same number again updates the record, not a second one.
		again := f.pr(7)
		again.Title, again.HeadSHA, again.Mergeable = "Ship it (v2)", shaB, new(true)
		got := must(s.LinkPullRequest(ctx, again))(t)
		if got.ID != pr.ID || got.Title != "Ship it (v2)" || got.HeadSHA != shaB || got.Mergeable == nil || !*got.Mergeable || got.Watch.Version <= pr.Watch.Version {
			t.Fatalf("linked again: %+v", got)
		}
		if got, err := s.FindPullRequest(ctx, f.task.ID, f.repo.ID, 7); err != nil || got.ID != pr.ID {
			t.Fatalf("find: %v, %v", got, err)
		}
		if _, err := s.FindPullRequest(ctx, f.task.ID, f.repo.ID, 8); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("find a missing one: got %v, want NOT_FOUND", err)
		}

		checkLinkRefusals(t, s, f)

		for _, n := range []int{1, 2, 3} {
			must(s.LinkPullRequest(ctx, f.pr(n)))(t)
		}
		page := must(s.ListTaskPullRequests(ctx, f.task.ID, kanban.Page{Limit: 3}))(t)
		rest := must(s.ListTaskPullRequests(ctx, f.task.ID, kanban.Page{Limit: 3, Cursor: page.NextCursor}))(t)
		if len(page.Items) != 3 || page.Items[0].Number != 7 || page.NextCursor == "" || len(rest.Items) != 1 || rest.NextCursor != "" || rest.Items[0].Number != 3 {
			t.Fatalf("pages: %d (%s) then %d", len(page.Items), page.NextCursor, len(rest.Items))
		}
		if _, err := s.ListTaskPullRequests(ctx, kanban.NewID(), kanban.Page{}); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("list of a missing task: %v", err)
		}

		// A webhook finds watched pull requests by number or by head.
		byNum := must(s.WatchedPullRequests(ctx, kanban.ForgeGitHub, "octo/app", []int{2, 3}, ""))(t)
		byHead := must(s.WatchedPullRequests(ctx, kanban.ForgeGitHub, "octo/app", nil, shaB))(t)
		none := must(s.WatchedPullRequests(ctx, kanban.ForgeGitHub, "octo/other", []int{2}, ""))(t)
		if len(byNum) != 2 || len(byHead) != 1 || byHead[0].Number != 7 || len(none) != 0 {
			t.Fatalf("watched: by number %d, by head %d, other repo %d", len(byNum), len(byHead), len(none))
		}
		must(s.ArchiveTask(ctx, f.task.ID))(t)
		if got := must(s.WatchedPullRequests(ctx, kanban.ForgeGitHub, "octo/app", []int{2, 3}, ""))(t); len(got) != 0 {
			t.Fatalf("an archived task's pull requests are still watched: %d", len(got))
		}
	})
}

// TestClaimAndRecordPoll: a due pull request is claimed once; the poll is
// recorded over the claimed version only, with its events, each key once;
// a webhook's write in between makes the poll stale and it writes nothing.
func TestClaimAndRecordPoll(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		pr := must(s.LinkPullRequest(ctx, f.pr(1)))(t)
		merged := f.pr(2)
		merged.State = kanban.PRMerged
		must(s.LinkPullRequest(ctx, merged))(t)

		now := time.Now().Add(time.Second)
		claimed := must(s.ClaimDuePullRequests(ctx, now, time.Minute, 10))(t)
		if len(claimed) != 1 || claimed[0].ID != pr.ID || claimed[0].Watch.Version != pr.Watch.Version+1 {
			t.Fatalf("claimed %+v, want the open pull request only, at the next version", claimed)
		}
		if again := must(s.ClaimDuePullRequests(ctx, now, time.Minute, 10))(t); len(again) != 0 {
			t.Fatalf("claimed twice: %d", len(again))
		}
		if due := must(s.NextPollDue(ctx))(t); due == nil || due.Before(now.Add(59*time.Second)) {
			t.Fatalf("next due %v, want the lease's end", due)
		}

		p := claimed[0]
		p.Checks, p.Review, p.Mergeable = kanban.ChecksFailing, kanban.ReviewApproved, new(true)
		p.Watch.NextPollAt, p.Watch.LastPolledAt = now.Add(time.Minute), &now
		p.Watch.Validators = map[string]string{"/repos/octo/app/pulls/1": `"e1"`}
		p.Watch.RequestedReviewers, p.Watch.LastReviewID, p.Watch.CommentsSince = []string{"alice"}, 1<<40, now.UTC().Truncate(time.Microsecond)
		p.Automation.AutoFixRounds, p.Automation.LastFixAt = 1, &now
		events := []kanban.PREvent{{Key: "checks_failing:" + shaA, Kind: "checks_failing", Payload: []byte(`{"check":"test"}`)},
			{Key: "review:1099511627776", Kind: "review_submitted"}}
		rec := must(s.RecordPoll(ctx, p, events))(t)
		if len(rec) != 2 || rec[0].Seq != 1 || rec[1].Seq != 2 || rec[0].State != kanban.EventPending {
			t.Fatalf("recorded %+v", rec)
		}
		got := must(s.GetPullRequest(ctx, pr.ID))(t)
		if got.Checks != kanban.ChecksFailing || got.Review != kanban.ReviewApproved || !*got.Mergeable || got.Watch.Validators["/repos/octo/app/pulls/1"] != `"e1"` ||
			got.Watch.LastReviewID != 1<<40 || len(got.Watch.RequestedReviewers) != 1 || got.Automation.AutoFixRounds != 1 ||
			!got.Watch.CommentsSince.Equal(p.Watch.CommentsSince) || got.Watch.Version != p.Watch.Version+1 {
			t.Fatalf("after the poll: %+v", got)
		}
		// The same poll recorded again is stale: nothing is written.
		if _, err := s.RecordPoll(ctx, p, []kanban.PREvent{{Key: "merged", Kind: "merged"}}); !errors.Is(err, ErrStale) || kanban.ErrorCode(err) != kanban.CodeConflict {
			t.Fatalf("stale record: got %v, want ErrStale", err)
		}

		checkWebhookMakesPollStale(t, s, pr.ID, *got)

		bad := []kanban.PREvent{{Key: "", Kind: "x"}}
		if _, err := s.AddPREvents(ctx, pr.ID, bad, false); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("an event without key: %v", err)
		}
		if _, err := s.AddPREvents(ctx, pr.ID, []kanban.PREvent{{Key: "k", Kind: "x", Payload: []byte("{")}}, false); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("an event whose payload is not JSON: %v", err)
		}
		must(s.ArchiveTask(ctx, f.task.ID))(t)
		if due := must(s.NextPollDue(ctx))(t); due != nil {
			t.Fatalf("an archived task's pull request is due at %v", due)
		}
	})
}

// TestPREventJournal: entries are claimed by one backend at a time per
// pull request, retried when due, and interrupted — never acted on again —
// when their backend died while acting.
func TestPREventJournal(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		pr := must(s.LinkPullRequest(ctx, f.pr(1)))(t)
		must(s.AddPREvents(ctx, pr.ID, []kanban.PREvent{{Key: "a", Kind: "x"}, {Key: "b", Kind: "x"}}, false))(t)
		now := time.Now().Add(time.Second)
		got := must(s.ClaimPREvents(ctx, "backend-1", now, 10))(t)
		if len(got) != 2 || got[0].Key != "a" || got[1].Key != "b" || got[0].State != kanban.EventDelivering || got[0].Attempts != 1 || got[0].ClaimedBy != "backend-1" {
			t.Fatalf("claimed %+v", got)
		}
		must(s.AddPREvents(ctx, pr.ID, []kanban.PREvent{{Key: "c", Kind: "x"}}, false))(t)
		if other := must(s.ClaimPREvents(ctx, "backend-2", now, 10))(t); len(other) != 0 {
			t.Fatalf("a second backend claimed %d entries of a pull request being acted on", len(other))
		}
		if err := s.FinishPREvent(ctx, got[0].ID, "backend-1", PREventOutcome{State: kanban.EventDelivered}); err != nil {
			t.Fatal(err)
		}
		retry := now.Add(time.Hour)
		if err := s.FinishPREvent(ctx, got[1].ID, "backend-1", PREventOutcome{State: kanban.EventPending, RetryAt: retry, Error: "no session to prompt"}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishPREvent(ctx, got[1].ID, "backend-1", PREventOutcome{State: kanban.EventDelivered}); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("finishing an entry twice: %v", err)
		}
		if p := must(s.GetPullRequest(ctx, pr.ID))(t); p.Automation.LastError != "no session to prompt" {
			t.Fatalf("last error %q", p.Automation.LastError)
		}
		c := must(s.ClaimPREvents(ctx, "backend-2", now, 10))(t)
		if len(c) != 1 || c[0].Key != "c" {
			t.Fatalf("claimed %+v, want c only (b waits for its retry)", c)
		}
		if err := s.ReleasePREvents(ctx, "backend-2", []string{c[0].ID}); err != nil {
			t.Fatal(err)
		}
		later := must(s.ClaimPREvents(ctx, "backend-2", retry.Add(time.Second), 10))(t)
		if len(later) != 2 || later[0].Key != "b" || later[0].Attempts != 2 || later[1].Key != "c" || later[1].Attempts != 1 {
			t.Fatalf("after the retry time: %+v", later)
		}
		// backend-2 dies while acting; backend-3 interrupts its entries.
		n := must(s.InterruptPREvents(ctx, "backend-3", time.Now().Add(-time.Minute)))(t)
		if n != 2 {
			t.Fatalf("interrupted %d, want 2", n)
		}
		if again := must(s.ClaimPREvents(ctx, "backend-3", retry.Add(time.Hour), 10))(t); len(again) != 0 {
			t.Fatalf("interrupted entries were claimed again: %+v", again)
		}
		checkLiveBackendKept(t, s, pr.ID, now)
		if states := journalStates(t, s, pr.ID); states != "a=delivered b=interrupted c=interrupted d=delivering " {
			t.Fatalf("journal: %s", states)
		}
	})
}

// checkLinkRefusals checks that links with a bad field are refused and
// write nothing (f's task has one pull request linked).
func checkLinkRefusals(t *testing.T, s *Store, f prFixture) {
	t.Helper()
	ctx := context.Background()
	other := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: f.b.ws.ID, Name: "other", LocalPath: "/src/other"}))(t)
	for _, c := range []struct {
		name  string
		edit  func(*kanban.PullRequest)
		code  kanban.Code
		field string
	}{
		{"repository not linked to the task", func(p *kanban.PullRequest) { p.RepositoryID = other.ID }, kanban.CodeValidation, "repository_id"},
		{"missing task", func(p *kanban.PullRequest) { p.TaskID = kanban.NewID() }, kanban.CodeNotFound, ""},
		{"unknown forge", func(p *kanban.PullRequest) { p.Forge = "gitea" }, kanban.CodeValidation, "forge"},
		{"number 0", func(p *kanban.PullRequest) { p.Number = 0 }, kanban.CodeValidation, "number"},
		{"number over 32 bits", func(p *kanban.PullRequest) { p.Number = kanban.MaxPRNumber + 1 }, kanban.CodeValidation, "number"},
		{"forge repo without owner", func(p *kanban.PullRequest) { p.ForgeRepo = "app" }, kanban.CodeValidation, "forge_repo"},
		{"forge repo with ..", func(p *kanban.PullRequest) { p.ForgeRepo = "octo/../admin" }, kanban.CodeValidation, "forge_repo"},
		{"forge repo with ?", func(p *kanban.PullRequest) { p.ForgeRepo = "octo/app?x=1" }, kanban.CodeValidation, "forge_repo"},
		{"short sha", func(p *kanban.PullRequest) { p.HeadSHA = "abc" }, kanban.CodeValidation, "head_sha"},
		{"head branch shaped like an option", func(p *kanban.PullRequest) { p.HeadBranch = "--upload-pack=x" }, kanban.CodeValidation, "head_branch"},
		{"title with a newline", func(p *kanban.PullRequest) { p.Title = "a\nb" }, kanban.CodeValidation, "title"},
		{"unknown state", func(p *kanban.PullRequest) { p.State = "OPEN" }, kanban.CodeValidation, "state"},
	} {
		p := f.pr(9)
		c.edit(&p)
		_, err := s.LinkPullRequest(ctx, p)
		e, _ := kanban.AsError(err)
		if kanban.ErrorCode(err) != c.code || e != nil && e.Field != c.field {
			t.Errorf("%s: got %v, want %s on %q", c.name, err, c.code, c.field)
		}
	}
	if n := countRows(t, s, "task_pull_requests"); n != 1 {
		t.Fatalf("refused links wrote rows: %d pull requests, want 1", n)
	}
}

// checkWebhookMakesPollStale: a webhook records an event (one it had
// already is skipped) and makes the pull request due: the next poll's
// claim (p) is stale first.
func checkWebhookMakesPollStale(t *testing.T, s *Store, prID string, p kanban.PullRequest) {
	t.Helper()
	ctx := context.Background()
	added := must(s.AddPREvents(ctx, prID, []kanban.PREvent{{Key: "review:1099511627776", Kind: "review_submitted"},
		{Key: "comment:5", Kind: "review_comment"}}, true))(t)
	if len(added) != 1 || added[0].Key != "comment:5" || added[0].Seq != 3 {
		t.Fatalf("webhook added %+v", added)
	}
	if _, err := s.RecordPoll(ctx, p, nil); !errors.Is(err, ErrStale) {
		t.Fatalf("a poll claimed before the webhook: got %v, want ErrStale", err)
	}
	if again := must(s.ClaimDuePullRequests(ctx, time.Now().Add(time.Second), time.Minute, 10))(t); len(again) != 1 {
		t.Fatalf("the webhook did not make the pull request due: %d claimed", len(again))
	}
	list := must(s.ListPREvents(ctx, prID, kanban.Page{Limit: 2}))(t)
	rest := must(s.ListPREvents(ctx, prID, kanban.Page{Limit: 2, Cursor: list.NextCursor}))(t)
	if len(list.Items) != 2 || len(rest.Items) != 1 || rest.Items[0].Key != "comment:5" || string(list.Items[0].Payload) != `{"check":"test"}` {
		t.Fatalf("journal pages %+v then %+v", list.Items, rest.Items)
	}
}

// checkLiveBackendKept checks that a live backend's entries are not
// interrupted.
func checkLiveBackendKept(t *testing.T, s *Store, prID string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	must(s.AddPREvents(ctx, prID, []kanban.PREvent{{Key: "d", Kind: "x"}}, false))(t)
	must(s.ClaimPREvents(ctx, "backend-4", now, 10))(t)
	if err := s.Heartbeat(ctx, "backend-4", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := must(s.InterruptPREvents(ctx, "backend-3", time.Now().Add(-time.Minute)))(t); n != 0 {
		t.Fatalf("interrupted %d entries of a live backend", n)
	}
}

// journalStates is the key and state of each entry of a pull request's
// journal, in order.
func journalStates(t *testing.T, s *Store, prID string) string {
	t.Helper()
	l := must(s.ListPREvents(context.Background(), prID, kanban.Page{}))(t)
	states := ""
	for _, e := range l.Items {
		states += e.Key + "=" + string(e.State) + " "
	}
	return states
}
