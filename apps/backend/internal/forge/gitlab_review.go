package forge

import (
	"context"
	"slices"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// gitlabPerPage is the page size of every list (GitLab's maximum).
const gitlabPerPage = 100

// maxNotePages bounds the pages of notes read in one call.
const maxNotePages = 10 * MaxItems / gitlabPerPage

// Reviews lists a merge request's approvals given after since, oldest
// first, as approved reviews (GitLab has no review verdicts in its REST
// API beyond approvals: an approval withdrawn is no longer listed, which
// withdraws the verdict). Each approval's ID is made of when it was given
// and who gave it, so it grows with time and a withdrawn and renewed
// approval is a new review.
func (g *GitLab) Reviews(ctx context.Context, repo Repo, number int, since time.Time) (*Reviews, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	a, resp, err := g.c.MergeRequestApprovals.GetConfiguration(pid, int64(number), gitlab.WithContext(ctx))
	if glBodiless(resp) {
		return &Reviews{Items: []Review{}, NotModified: true}, nil
	}
	if err != nil {
		return nil, mapGitLabError("the merge request", err, g.redact)
	}
	out := &Reviews{Items: []Review{}, NotModified: glNotModified(resp)}
	for _, ap := range a.ApprovedBy {
		if ap == nil || ap.User == nil || ap.User.Username == "" {
			continue
		}
		var at time.Time
		if ap.ApprovedAt != nil {
			at = *ap.ApprovedAt
		}
		if !since.IsZero() && !at.After(since) {
			continue
		}
		if len(out.Items) == MaxItems {
			out.Truncated = true
			break
		}
		out.Items = append(out.Items, Review{ID: approvalID(at, ap.User.ID), Author: boundText(ap.User.Username, 100),
			State: ReviewApproved, SubmittedAt: at})
	}
	slices.SortStableFunc(out.Items, func(a, b Review) int { return a.SubmittedAt.Compare(b.SubmittedAt) })
	return out, nil
}

// approvalID is an approval's ID: its second and its user (GitLab gives
// approvals none of their own).
func approvalID(at time.Time, user int64) int64 {
	id := user % 1_000_000_000
	if !at.IsZero() && at.Unix() > 0 {
		id += at.Unix() * 1_000_000_000
	}
	return id
}

// ReviewComments lists a merge request's diff notes (comments on lines of
// its diff, and the replies in their threads) updated at or after since,
// oldest update first. GitLab's notes list has no since parameter: it is
// read newest update first and stops at the first note older than since.
// System notes and comments not on the diff are not review comments.
func (g *GitLab) ReviewComments(ctx context.Context, repo Repo, number int, since time.Time) (*ReviewComments, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	out := &ReviewComments{Items: []ReviewComment{}, NotModified: true}
	anyBodiless := false
	orderBy, sort := "updated_at", "desc"
	opt := &gitlab.ListMergeRequestNotesOptions{OrderBy: &orderBy, Sort: &sort, ListOptions: gitlab.ListOptions{PerPage: gitlabPerPage}}
	var found []ReviewComment
	done := false
	for page := 0; page < maxNotePages && !done; page++ {
		notes, resp, err := g.c.Notes.ListMergeRequestNotes(pid, int64(number), opt, gitlab.WithContext(ctx))
		if glBodiless(resp) {
			anyBodiless = true
			break // the caller's ETag of the newest page: nothing changed since
		}
		if err != nil {
			return nil, mapGitLabError("the merge request", err, g.redact)
		}
		out.NotModified = out.NotModified && glNotModified(resp)
		for _, n := range notes {
			if n.UpdatedAt != nil && !since.IsZero() && n.UpdatedAt.Before(since) {
				done = true
				break
			}
			if c, ok := diffNote(n); ok {
				found = append(found, c)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if anyBodiless {
		if out.NotModified {
			return &ReviewComments{Items: []ReviewComment{}, NotModified: true}, nil
		}
		return g.ReviewComments(withoutSeeds(ctx), repo, number, since)
	}
	slices.Reverse(found)
	slices.SortStableFunc(found, func(a, b ReviewComment) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	if len(found) > MaxItems {
		found, out.Truncated = found[:MaxItems], true
	}
	out.Items = append(out.Items, found...)
	return out, nil
}

// diffNote is a note as a review comment, if it is one on the diff.
func diffNote(n *gitlab.Note) (ReviewComment, bool) {
	if n == nil || n.System || n.Type != gitlab.DiffNote || n.Position == nil {
		return ReviewComment{}, false
	}
	p := n.Position
	c := ReviewComment{ID: n.ID, Author: boundText(n.Author.Username, 100), Body: boundText(n.Body, MaxTextBytes),
		Path: boundText(p.NewPath, 4096), Line: int(p.NewLine), Side: "RIGHT", CommitSHA: p.HeadSHA}
	if p.NewLine == 0 && p.OldLine > 0 { // a comment on a removed line
		c.Path, c.Line, c.Side = boundText(p.OldPath, 4096), int(p.OldLine), "LEFT"
	}
	if lr := p.LineRange; lr != nil && lr.StartRange != nil {
		start := lr.StartRange.NewLine
		if c.Side == "LEFT" {
			start = lr.StartRange.OldLine
		}
		if start > 0 && int(start) < c.Line {
			c.StartLine = int(start)
		}
	}
	if n.CreatedAt != nil {
		c.CreatedAt = *n.CreatedAt
	}
	c.UpdatedAt = c.CreatedAt
	if n.UpdatedAt != nil {
		c.UpdatedAt = *n.UpdatedAt
	}
	return c, true
}
