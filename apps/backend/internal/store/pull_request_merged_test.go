package store

import (
	"context"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestMergedOnce: a merge through Kandev (MarkPullRequestMerged) and a
// watcher's poll that found the pull request merged go through one
// compare-and-set: whichever comes first moves it (and only a poll that
// moved it records its merged event), the other reports no change.
func TestMergedOnce(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		first := must(s.LinkPullRequest(ctx, f.pr(1)))(t)
		second := must(s.LinkPullRequest(ctx, f.pr(2)))(t)
		claimed := must(s.ClaimDuePullRequests(ctx, time.Now().Add(time.Second), time.Minute, 10))(t)
		if len(claimed) != 2 {
			t.Fatalf("claimed %d, want 2", len(claimed))
		}
		polls := map[string]kanban.PullRequest{}
		for _, p := range claimed {
			p.State, p.Watch.NextPollAt = kanban.PRMerged, time.Now().Add(time.Minute)
			polls[p.ID] = p
		}
		merged := []kanban.PREvent{{Key: kanban.PREventKeyMerged, Kind: "merged"}, {Key: "review:1", Kind: "review_submitted"}}

		// The poll first: it moves the pull request and records the event;
		// the merge through Kandev then reports no change.
		rec := must(s.RecordPoll(ctx, polls[first.ID], merged))(t)
		if len(rec) != 2 || rec[0].Key != kanban.PREventKeyMerged {
			t.Fatalf("the poll that moved it recorded %+v", rec)
		}
		if got, changed, err := s.MarkPullRequestMerged(ctx, first.ID, ""); err != nil || changed || got.State != kanban.PRMerged {
			t.Fatalf("marked after the poll: changed %v, %v", changed, err)
		}

		// Kandev first: the poll claimed before it is stale; one claimed
		// after records the other events, not the merged one.
		if _, changed, err := s.MarkPullRequestMerged(ctx, second.ID, shaB); err != nil || !changed {
			t.Fatalf("marked first: changed %v, %v", changed, err)
		}
		if _, err := s.RecordPoll(ctx, polls[second.ID], merged); kanban.ErrorCode(err) != kanban.CodeConflict {
			t.Fatalf("a poll claimed before the merge: %v, want stale", err)
		}
		late := polls[second.ID]
		late.Watch.Version = must(s.GetPullRequest(ctx, second.ID))(t).Watch.Version
		late.HeadSHA = shaB
		rec = must(s.RecordPoll(ctx, late, merged))(t)
		if len(rec) != 1 || rec[0].Key == kanban.PREventKeyMerged {
			t.Fatalf("a poll after the merge recorded %+v, want no merged event", rec)
		}
		if got := must(s.GetPullRequest(ctx, second.ID))(t); got.State != kanban.PRMerged {
			t.Fatalf("state %s", got.State)
		}
	})
}
