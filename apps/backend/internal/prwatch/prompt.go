package prwatch

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The prompts the PR automation sends. The lifecycle prompts are fixed
// text whose only variable part is the pull request's URL (checked to be
// an http(s) URL): nothing a forge user wrote reaches them. The auto-fix
// prompt is the task's override or kanban.DefaultAutoFixPrompt with the
// feedback (the failing check's name, conclusion, link and log excerpt)
// in place of kanban.AutoFixFeedback; the excerpt is forge output, fenced
// so that it reads as a log, and bounded.

// prLink is how a prompt names pr: its URL when that is a plain http(s)
// URL, else its number.
func prLink(pr kanban.PullRequest) string {
	u, err := url.Parse(pr.URL)
	if err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil &&
		!strings.ContainsAny(pr.URL, " \t\r\n`<>\"") {
		return pr.URL
	}
	return "#" + strconv.Itoa(pr.Number)
}

func lifecyclePrompt(reason string, pr kanban.PullRequest) *Prompt {
	link := prLink(pr)
	var text string
	switch reason {
	case ReasonReviewRequested:
		text = "A review was requested on the pull request " + link + "."
	case ReasonMerged:
		text = "The pull request " + link + " was merged."
	case ReasonClosed:
		text = "The pull request " + link + " was closed without merging."
	}
	return &Prompt{Text: text, Reason: reason}
}

// autoFixPrompt is the auto-fix prompt of pr for check, from the task's
// override (nil: the default).
func autoFixPrompt(override *string, pr kanban.PullRequest, c *Check) *Prompt {
	tmpl := kanban.DefaultAutoFixPrompt
	if override != nil && strings.TrimSpace(*override) != "" {
		tmpl = *override
	}
	text := strings.ReplaceAll(tmpl, kanban.AutoFixFeedback, feedback(pr, c))
	return &Prompt{Text: kanban.Clip(text, kanban.MaxPromptLen), Reason: ReasonAutoFix}
}

// feedback describes a failing check for the agent.
func feedback(pr kanban.PullRequest, c *Check) string {
	var b strings.Builder
	b.WriteString("Pull request: " + prLink(pr) + "\n")
	b.WriteString("Head commit: " + pr.HeadSHA + "\n")
	b.WriteString("Failing check: " + oneLine(c.Name) + " (" + oneLine(c.Conclusion) + ")\n")
	if len(c.Failing) > 0 {
		names := make([]string, len(c.Failing))
		for i, n := range c.Failing {
			names[i] = oneLine(n)
		}
		b.WriteString("Also failing: " + strings.Join(names, ", ") + "\n")
	}
	if c.Excerpt != "" {
		what := "The end of its log"
		if c.Truncated {
			what += " (earlier lines cut)"
		}
		fence := fenceFor(c.Excerpt)
		b.WriteString("\n" + what + ":\n" + fence + "\n" + strings.TrimRight(c.Excerpt, "\n") + "\n" + fence + "\n")
	}
	return b.String()
}

// fenceFor returns a backtick fence longer than any run of backticks in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// oneLine keeps a forge-given name on one line, bounded.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return kanban.Clip(s, kanban.MaxNameLen)
}

// ReviewPrompt is the prompt that brings a reviewer's words to the task's
// agent: a line comment (ReviewCommented) or a review with a text or a
// request for changes (ReviewSubmitted). The reviewer's text is forge
// input, fenced and bounded; nil when the event carries nothing to say.
func ReviewPrompt(e Event) *Prompt {
	var head, body string
	switch {
	case e.Kind == ReviewCommented && e.Comment != nil:
		c := e.Comment
		where := oneLine(c.Path)
		if c.Line > 0 {
			where += ":" + strconv.Itoa(c.Line)
			if c.StartLine > 0 && c.StartLine < c.Line {
				where = oneLine(c.Path) + ":" + strconv.Itoa(c.StartLine) + "-" + strconv.Itoa(c.Line)
			}
		}
		head = "Reviewer " + oneLine(c.Author) + " commented on " + where + " of the pull request " + prLink(e.PR) + ":"
		body = c.Body
	case e.Kind == ReviewSubmitted && e.Review != nil && (strings.TrimSpace(e.Review.Body) != "" || e.Review.State == "changes_requested"):
		r := e.Review
		head = "Reviewer " + oneLine(r.Author) + " reviewed the pull request " + prLink(e.PR) + " (" + oneLine(string(r.State)) + ")"
		if strings.TrimSpace(r.Body) == "" {
			return &Prompt{Text: head + ".", Reason: ReasonReview}
		}
		head += ":"
		body = r.Body
	default:
		return nil
	}
	fence := fenceFor(body)
	text := head + "\n\n" + fence + "\n" + strings.TrimRight(body, "\n") + "\n" + fence + "\n\nAddress it, then commit and push."
	return &Prompt{Text: kanban.Clip(text, kanban.MaxPromptLen), Reason: ReasonReview}
}
