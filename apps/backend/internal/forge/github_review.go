package forge

import (
	"context"
	"strings"
	"time"

	"github.com/google/go-github/v93/github"
)

// perPage is the page size of every list (GitHub's maximum).
const perPage = 100

// Reviews lists a pull request's reviews submitted after since. GitHub's
// reviews endpoint has no since parameter: every page is read (each
// conditionally) and filtered here.
func (g *GitHub) Reviews(ctx context.Context, repo Repo, number int, since time.Time) (*Reviews, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	out := &Reviews{Items: []Review{}, NotModified: true}
	opts := &github.ListOptions{PerPage: perPage}
	anyBodiless := false
	for read := 0; ; {
		page, resp, err := g.c.PullRequests.ListReviews(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, mapError("the pull request", err, g.redact)
		}
		out.NotModified = out.NotModified && notModified(resp)
		anyBodiless = anyBodiless || bodiless(resp)
		for _, r := range page {
			read++
			at := r.GetSubmittedAt().Time
			if !since.IsZero() && !at.After(since) {
				continue
			}
			if len(out.Items) == MaxItems {
				out.Truncated = true
				break
			}
			out.Items = append(out.Items, Review{ID: r.GetID(), Author: r.GetUser().GetLogin(), State: reviewState(r.GetState()),
				Body: boundText(r.GetBody(), MaxTextBytes), CommitSHA: r.GetCommitID(), SubmittedAt: at})
		}
		if out.Truncated || resp.NextPage == 0 || read >= 10*MaxItems {
			break
		}
		opts.Page = resp.NextPage
	}
	switch {
	case out.NotModified && anyBodiless:
		return &Reviews{Items: []Review{}, NotModified: true}, nil
	case anyBodiless:
		return g.Reviews(withoutSeeds(ctx), repo, number, since)
	}
	return out, nil
}

func reviewState(s string) ReviewState {
	switch strings.ToUpper(s) {
	case "APPROVED":
		return ReviewApproved
	case "CHANGES_REQUESTED":
		return ReviewChangesRequested
	case "DISMISSED":
		return ReviewDismissed
	case "PENDING":
		return ReviewPending
	}
	return ReviewCommented
}

// ReviewComments lists a pull request's line comments updated at or
// after since, oldest update first.
func (g *GitHub) ReviewComments(ctx context.Context, repo Repo, number int, since time.Time) (*ReviewComments, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	out := &ReviewComments{Items: []ReviewComment{}, NotModified: true}
	opts := &github.PullRequestListCommentsOptions{Sort: "updated", Direction: "asc", Since: since.UTC().Truncate(time.Second),
		ListOptions: github.ListOptions{PerPage: perPage}}
	anyBodiless := false
	for {
		page, resp, err := g.c.PullRequests.ListComments(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, mapError("the pull request", err, g.redact)
		}
		out.NotModified = out.NotModified && notModified(resp)
		anyBodiless = anyBodiless || bodiless(resp)
		for _, c := range page {
			if len(out.Items) == MaxItems {
				out.Truncated = true
				break
			}
			out.Items = append(out.Items, ReviewComment{
				ID: c.GetID(), ReviewID: c.GetPullRequestReviewID(), InReplyTo: c.GetInReplyTo(), Author: c.GetUser().GetLogin(),
				Body: boundText(c.GetBody(), MaxTextBytes), Path: c.GetPath(), Line: c.GetLine(), StartLine: c.GetStartLine(),
				Side: c.GetSide(), CommitSHA: c.GetCommitID(), CreatedAt: c.GetCreatedAt().Time, UpdatedAt: c.GetUpdatedAt().Time,
				URL: c.GetHTMLURL(),
			})
		}
		if out.Truncated || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	switch {
	case out.NotModified && anyBodiless:
		return &ReviewComments{Items: []ReviewComment{}, NotModified: true}, nil
	case anyBodiless:
		return g.ReviewComments(withoutSeeds(ctx), repo, number, since)
	}
	return out, nil
}
