package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const filesUsage = "usage: kandev files list --task ID [--path DIR] [--limit N] [--cursor C] | kandev files read --task ID --path FILE"

// filesCmd runs kandev files SUB: a task's working directory, read-only,
// through the backend's task.files.* actions — a directory's page as
// JSON, a file's text as it is (a binary file is named, not printed).
func filesCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "read") {
		return errors.New(filesUsage)
	}
	sub := args[0]
	fs, creds := operatorFlags("files "+sub, stderr)
	task := fs.String("task", "", "task id (required)")
	path := fs.String("path", "", "a path relative to the task's working directory (list: a directory, default its top; read: a file)")
	limit := fs.Int("limit", 0, "page size (list; default 50)")
	cursor := fs.String("cursor", "", "the previous page's next_cursor (list)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	in := map[string]any{}
	set(in, "task_id", *task)
	set(in, "path", *path)
	if sub == "list" {
		set(in, "limit", *limit)
		set(in, "cursor", *cursor)
		var out any
		if err := Operator(ctx, backend, tok, kanban.ActionTaskFilesList, in, &out); err != nil {
			return err
		}
		return writeIndented(stdout, out)
	}
	var f action.FilesReadOut
	if err := Operator(ctx, backend, tok, kanban.ActionTaskFilesRead, in, &f); err != nil {
		return err
	}
	if f.Binary {
		_, err := fmt.Fprintf(stdout, "binary file, %d bytes: not shown\n", f.Size)
		return err
	}
	_, err = io.WriteString(stdout, f.Content)
	return err
}
