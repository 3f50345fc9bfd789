package action

import (
	"bytes"
	"context"
	"encoding/base64"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The operator's read-only view of a task's working directory (the
// board's Files tab): the directory the task's agent works in, as the
// server knows it (taskdir), read through the filesystem policy — every
// path confined to it, never through a link that leaves it, never a FIFO,
// socket, device or a file Kandev protects. Agents have their own tools
// for their own files; these actions are the operator's only.

// FilesListIn is the payload of task.files.list.
type FilesListIn struct {
	TaskID string `json:"task_id,omitzero"`
	Path   string `json:"path,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// FilesListOut is one page of a directory of a task's working directory,
// its entries sorted by name.
type FilesListOut struct {
	TaskID     string          `json:"task_id"`
	Path       string          `json:"path"`
	Items      []fsguard.Entry `json:"items"`
	NextCursor string          `json:"next_cursor,omitempty"`
	// Partial says the directory holds more than kanban.MaxDirEntries
	// names: only that many were listed.
	Partial bool `json:"partial,omitempty"`
}

// FilesReadIn is the payload of task.files.read.
type FilesReadIn struct {
	TaskID string `json:"task_id,omitzero"`
	Path   string `json:"path,omitzero"`
}

// FilesReadOut is one file of a task's working directory: its text, or
// only that it is binary (its bytes are not sent).
type FilesReadOut struct {
	TaskID string `json:"task_id"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Binary bool   `json:"binary"`
	// Content is the file's text (UTF-8); empty for a binary file.
	Content string `json:"content,omitempty"`
}

var _ = declare(Def[FilesListIn, *FilesListOut]{
	Name:   kanban.ActionTaskFilesList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id": idProp("The task whose working directory to list."),
		"path":    schema.Str(`A directory relative to the working directory; default "" (the directory itself).`).Len(0, kanban.MaxPathLen),
	}), "task_id"),
	Run: (*Service).filesList,
})

var _ = declare(Def[FilesReadIn, *FilesReadOut]{
	Name:   kanban.ActionTaskFilesRead,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"task_id": idProp("The task whose working directory holds the file."),
		"path":    schema.Str("A regular file relative to the working directory.").Len(1, kanban.MaxPathLen),
	}, "task_id", "path"),
	Run: (*Service).filesRead,
})

func (s *Service) filesList(ctx context.Context, p Principal, in FilesListIn) (*FilesListOut, error) {
	page, err := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}.Normalize()
	if err != nil {
		return nil, err
	}
	after, err := decodeName(page.Cursor)
	if err != nil {
		return nil, err
	}
	dir, err := s.workDir(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	l, err := s.fs.ListDir(ctx, dir, in.Path, "path", after, page.Limit)
	if err != nil {
		return nil, err
	}
	out := &FilesListOut{TaskID: in.TaskID, Path: in.Path, Items: l.Entries, Partial: l.Partial}
	if out.Items == nil {
		out.Items = []fsguard.Entry{}
	}
	if l.More {
		out.NextCursor = encodeName(l.Entries[len(l.Entries)-1].Name)
	}
	return out, nil
}

func (s *Service) filesRead(ctx context.Context, p Principal, in FilesReadIn) (*FilesReadOut, error) {
	dir, err := s.workDir(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	f, err := s.fs.ReadFile(ctx, dir, in.Path, "path", kanban.MaxViewBytes+1)
	if err != nil {
		return nil, err
	}
	if f.Size > kanban.MaxViewBytes || len(f.Head) > kanban.MaxViewBytes {
		return nil, kanban.FieldError("path", "is larger than %d MiB, the most the file viewer shows", kanban.MaxViewBytes>>20)
	}
	out := &FilesReadOut{TaskID: in.TaskID, Path: in.Path, Size: f.Size}
	if isBinary(f.Head) {
		out.Binary = true
		return out, nil
	}
	out.Content = string(f.Head)
	return out, nil
}

// workDir is the existing working directory of the task the operator
// names (nothing is created to read it).
func (s *Service) workDir(ctx context.Context, p Principal, taskID string) (fsguard.Dir, error) {
	t, err := s.taskFor(ctx, p, taskID)
	if err != nil {
		return fsguard.Dir{}, err
	}
	return s.dirs.Existing(ctx, t, "")
}

// WorkDir is the existing working directory of task taskID, for the
// operator's terminal: FORBIDDEN for any other principal, CONFLICT for an
// archived task (its terminals were closed with it), NOT_FOUND while the
// directory does not exist yet.
func (s *Service) WorkDir(ctx context.Context, p Principal, taskID string) (string, error) {
	if !p.IsOperator() {
		return "", kanban.Errorf(kanban.CodeForbidden, "the terminal is for the operator only")
	}
	t, err := s.taskFor(ctx, p, taskID)
	if err != nil {
		return "", err
	}
	if t.ArchivedAt != nil {
		return "", kanban.Errorf(kanban.CodeConflict, "the task is archived; unarchive it to open a terminal")
	}
	d, err := s.dirs.Existing(ctx, t, "")
	if err != nil {
		return "", err
	}
	return d.Path, nil
}

// isBinary reports whether b is not text to show: it holds a NUL byte or
// is not valid UTF-8.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

// A name cursor is "n" and the base64url of the last name of a page.
func encodeName(name string) string { return "n" + base64.RawURLEncoding.EncodeToString([]byte(name)) }

func decodeName(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c[1:])
	if c[0] != 'n' || err != nil || len(b) == 0 {
		return "", kanban.FieldError("cursor", "is not a valid cursor")
	}
	return string(b), nil
}
