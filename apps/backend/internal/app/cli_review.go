package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	changesUsage = "usage: kandev changes summary|list|diff|commits --task ID [--repository ID] [--path P] [--limit N] [--cursor C]"
	reviewUsage  = "usage: kandev review comment|list|resolve|send [flags] (kandev review SUBCOMMAND -h)"
)

// reviewFlags are the flags of kandev changes and kandev review.
type reviewFlags struct {
	task, repo, path, oldPath, cursor, lines, side, body, state, comment, session string
	limit                                                                         int
}

// changesCmd runs kandev changes SUB: a task's changes through the
// backend's actions, printed as JSON (a diff as its patch).
func changesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(changesUsage)
	}
	sub := args[0]
	names := map[string]kanban.Action{"summary": kanban.ActionTaskChangesSummary, "list": kanban.ActionTaskChangesList,
		"diff": kanban.ActionTaskChangesDiff, "commits": kanban.ActionTaskChangesCommits}
	name, ok := names[sub]
	if !ok {
		return errors.New(changesUsage)
	}
	fs, creds := operatorFlags("changes "+sub, stderr)
	var f reviewFlags
	fs.StringVar(&f.task, "task", "", "task id (required)")
	fs.StringVar(&f.repo, "repository", "", "repository id (when the task has several)")
	fs.StringVar(&f.path, "path", "", "the changed file (diff)")
	fs.StringVar(&f.oldPath, "old-path", "", "a renamed file's path before the rename (diff)")
	fs.IntVar(&f.limit, "limit", 0, "page size (summary, list, commits; default 50)")
	fs.StringVar(&f.cursor, "cursor", "", "the previous page's next_cursor")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	in := map[string]any{}
	set(in, "limit", f.limit)
	for k, v := range map[string]string{"task_id": f.task, "repository_id": f.repo, "path": f.path, "old_path": f.oldPath, "cursor": f.cursor} {
		set(in, k, v)
	}
	if sub == "summary" {
		delete(in, "repository_id")
	}
	if sub == "diff" {
		var d action.DiffOut
		if err := Operator(ctx, backend, tok, name, in, &d); err != nil {
			return err
		}
		return writeDiff(stdout, &d)
	}
	var out any
	if err := Operator(ctx, backend, tok, name, in, &out); err != nil {
		return err
	}
	return writeIndented(stdout, out)
}

// writeDiff prints a file's patch, or says why there is none.
func writeDiff(w io.Writer, d *action.DiffOut) error {
	var err error
	switch {
	case d.FileDiff == nil:
		err = errors.New("the backend sent no diff")
	case d.TooLarge:
		_, err = fmt.Fprintf(w, "%s: larger than 1 MiB, not shown\n", d.Path)
	case d.Binary:
		_, err = fmt.Fprintf(w, "%s: binary, not shown\n", d.Path)
	default:
		_, err = io.WriteString(w, d.Patch)
		if err == nil && d.Truncated {
			_, err = io.WriteString(w, "… (the patch was cut at 2 MiB)\n")
		}
	}
	return err
}

// reviewCmd runs kandev review SUB: comment on lines of a task's diff,
// list the comments, resolve one, send the open ones to the agent.
func reviewCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(reviewUsage)
	}
	sub := args[0]
	fs, creds := operatorFlags("review "+sub, stderr)
	var f reviewFlags
	fs.StringVar(&f.task, "task", "", "task id (comment, list, send)")
	fs.StringVar(&f.repo, "repository", "", "repository id (when the task has several)")
	fs.StringVar(&f.path, "path", "", "the changed file (comment; list: only its comments)")
	fs.StringVar(&f.oldPath, "old-path", "", "a renamed file's path before the rename (comment)")
	fs.StringVar(&f.lines, "line", "", "line N or range N-M of the diff (comment)")
	fs.StringVar(&f.side, "side", "", "new (default) or old: the side of the diff the lines are on (comment)")
	fs.StringVar(&f.body, "body", "", "the comment (comment)")
	fs.StringVar(&f.state, "state", "", "open, sent, resolved or outdated (list)")
	fs.StringVar(&f.comment, "comment", "", "comment id (resolve)")
	fs.StringVar(&f.session, "session", "", "a live session of the task (send; default its newest)")
	fs.IntVar(&f.limit, "limit", 0, "page size (list; default 50)")
	fs.StringVar(&f.cursor, "cursor", "", "the previous page's next_cursor (list)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	name, in, err := reviewRequest(sub, f)
	if err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	var out any
	if err := Operator(ctx, backend, tok, name, in, &out); err != nil {
		return err
	}
	return writeIndented(stdout, out)
}

// reviewRequest builds the action and payload of kandev review SUB.
func reviewRequest(sub string, f reviewFlags) (kanban.Action, map[string]any, error) {
	in := map[string]any{}
	switch sub {
	case "comment":
		start, end, err := lineRange(f.lines)
		if err != nil {
			return "", nil, err
		}
		in["start_line"], in["end_line"] = start, end
		for k, v := range map[string]string{"task_id": f.task, "repository_id": f.repo, "path": f.path, "old_path": f.oldPath, "side": f.side, "body": f.body} {
			set(in, k, v)
		}
		return kanban.ActionReviewCommentCreate, in, nil
	case "list":
		set(in, "limit", f.limit)
		for k, v := range map[string]string{"task_id": f.task, "repository_id": f.repo, "path": f.path, "state": f.state, "cursor": f.cursor} {
			set(in, k, v)
		}
		return kanban.ActionReviewCommentList, in, nil
	case "resolve":
		in["id"], in["state"] = f.comment, string(kanban.CommentResolved)
		return kanban.ActionReviewCommentUpdate, in, nil
	case "send":
		set(in, "task_id", f.task)
		set(in, "session_id", f.session)
		return kanban.ActionReviewSend, in, nil
	}
	return "", nil, errors.New(reviewUsage)
}

// lineRange reads "N" or "N-M".
func lineRange(s string) (int, int, error) {
	a, b, isRange := strings.Cut(s, "-")
	start, err := strconv.Atoi(a)
	end := start
	if err == nil && isRange {
		end, err = strconv.Atoi(b)
	}
	if err != nil || start < 1 || end < start {
		return 0, 0, errors.New("review comment: --line must be N or N-M (1 ≤ N ≤ M)")
	}
	return start, end, nil
}

// set puts v in m under k unless it is empty (the action's default then
// applies).
func set[T comparable](m map[string]any, k string, v T) {
	var zero T
	if v != zero {
		m[k] = v
	}
}
