// Package taskdir finds the directory a task's agent works in — its
// repository checkout, its git worktree, a parent's directory it shares, or
// a per-task folder under the data dir — and resolves workspace-relative
// paths inside it without letting them escape.
package taskdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxInheritDepth bounds how far up a chain of subtasks the directory is
// looked for.
const maxInheritDepth = 16

// Dirs resolves task directories from the store and the data dir.
type Dirs struct {
	Store   kanban.Store
	DataDir string
}

// Owner returns the task whose directory t works in: t, or the ancestor it
// shares its directory with (workspace_mode inherit_parent, and by default
// a subtask without a repository of its own; new_workspace never shares).
func (d Dirs) Owner(ctx context.Context, t *kanban.Task) (*kanban.Task, error) {
	for range maxInheritDepth {
		if t.ParentID == "" || t.WorkspaceMode == kanban.WorkspaceNew {
			return t, nil
		}
		if t.WorkspaceMode == "" {
			links, err := d.Store.ListTaskRepositories(ctx, t.ID)
			if err != nil {
				return nil, err
			}
			if len(links) > 0 {
				return t, nil
			}
		}
		parent, err := d.Store.GetTask(ctx, t.ParentID)
		if err != nil {
			return nil, err
		}
		t = parent
	}
	return t, nil
}

// Repository returns the task's repository its directory comes from: the
// linked one whose id or name is sel, else the first with a local path
// (else the first); nil when the task has none.
func (d Dirs) Repository(ctx context.Context, taskID, sel string) (*kanban.Repository, *kanban.TaskRepository, error) {
	links, err := d.Store.ListTaskRepositories(ctx, taskID)
	if err != nil {
		return nil, nil, err
	}
	var first *kanban.Repository
	var firstLink *kanban.TaskRepository
	for i := range links {
		r, err := d.Store.GetRepository(ctx, links[i].RepositoryID)
		if err != nil {
			return nil, nil, err
		}
		if sel != "" {
			if r.ID == sel || r.Name == sel {
				return r, &links[i], nil
			}
			continue
		}
		if r.LocalPath != "" {
			return r, &links[i], nil
		}
		if first == nil {
			first, firstLink = r, &links[i]
		}
	}
	if sel != "" {
		return nil, nil, kanban.FieldError("repo", "is not a repository of the task (give its name or id)")
	}
	return first, firstLink, nil
}

// Existing returns the directory task t works in (for repository sel, or
// its main one) as it is now, creating nothing: its git worktree when it
// has one, else its repository's checkout, else its per-task folder.
// NOT_FOUND when that directory does not exist yet.
func (d Dirs) Existing(ctx context.Context, t *kanban.Task, sel string) (string, error) {
	owner, err := d.Owner(ctx, t)
	if err != nil {
		return "", err
	}
	repo, _, err := d.Repository(ctx, owner.ID, sel)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(d.DataDir, "tasks", owner.ID)
	if wt, err := d.Store.GetWorktree(ctx, owner.ID); err == nil && (repo == nil || wt.RepositoryID == repo.ID) {
		dir = wt.Path
	} else if err != nil && kanban.ErrorCode(err) != kanban.CodeNotFound {
		return "", err
	} else if repo != nil && repo.LocalPath != "" {
		dir = repo.LocalPath
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", kanban.Errorf(kanban.CodeNotFound, "the task's workspace directory does not exist on this machine yet")
	}
	return abs, nil
}

// Resolve returns the absolute path of the workspace-relative path rel in
// root. It refuses absolute paths, paths that climb out of root, and
// symbolic links that lead out of it; field names the argument in errors.
func Resolve(root, rel, field string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.ContainsRune(rel, 0) {
		return "", kanban.FieldError(field, "must be a path relative to the task's workspace")
	}
	clean := filepath.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", kanban.FieldError(field, "must stay inside the task's workspace")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	full, err := filepath.EvalSymlinks(filepath.Join(realRoot, clean))
	if errors.Is(err, os.ErrNotExist) {
		return "", kanban.Errorf(kanban.CodeNotFound, "%s: no such file in the task's workspace", field)
	}
	if err != nil {
		return "", kanban.FieldError(field, "cannot be read")
	}
	if full != realRoot && !strings.HasPrefix(full, realRoot+string(filepath.Separator)) {
		return "", kanban.FieldError(field, "must stay inside the task's workspace")
	}
	return full, nil
}
