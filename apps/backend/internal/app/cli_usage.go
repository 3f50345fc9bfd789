package app

import (
	"context"
	"errors"
	"io"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const usageUsage = "usage: kandev usage (--session ID [--limit N] [--cursor C] | --task ID | --workspace ID) [flags]"

// usageCmd runs kandev usage: what agents reported they consumed, of one
// session (totals and a page of its turns), a task or a workspace, as
// indented JSON.
func usageCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, creds := operatorFlags("usage", stderr)
	session := fs.String("session", "", "a session: its totals and its newest turns")
	task := fs.String("task", "", "a task: the sums of its sessions")
	workspace := fs.String("workspace", "", "a workspace: the sums of its sessions")
	limit := fs.Int("limit", 0, "page size of the session's turns (default 50)")
	cursor := fs.String("cursor", "", "the previous page's next_cursor (--session)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	named := 0
	for _, v := range []string{*session, *task, *workspace} {
		if v != "" {
			named++
		}
	}
	if named != 1 {
		return errors.New(usageUsage)
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	in := map[string]any{}
	name := kanban.ActionWorkspaceUsage
	switch {
	case *session != "":
		name = kanban.ActionSessionUsage
		set(in, "id", *session)
		set(in, "limit", *limit)
		set(in, "cursor", *cursor)
	case *task != "":
		name = kanban.ActionTaskUsage
		set(in, "task_id", *task)
	default:
		set(in, "workspace_id", *workspace)
	}
	var out any
	if err := Operator(ctx, backend, tok, name, in, &out); err != nil {
		return err
	}
	return writeIndented(stdout, out)
}
