// Package taskdir finds the directory a task's agent works in — its
// repository checkout, its git worktree, a parent's directory it shares, or
// a per-task folder under the data dir — checked by the filesystem policy
// (internal/fsguard) each time it is used. It imports the domain and
// fsguard, never the store, the action layer or the runtime.
package taskdir

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxInheritDepth bounds how far up a chain of subtasks the directory is
// looked for.
const maxInheritDepth = 16

// Dirs resolves task directories from the store under the filesystem
// policy (whose data dir holds the per-task folders).
type Dirs struct {
	Store kanban.Store
	Guard *fsguard.Policy
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
// its main one) as it is now, creating nothing: its git worktree of that
// repository when it has one (with several worktrees and no sel, the task
// directory holding them), else the repository's checkout, else its
// per-task folder. Each passes the filesystem policy at this use (a
// repository row may predate it): a checkout must lie in a source root
// and touch no protected path (FORBIDDEN), Kandev's own folders must be
// what Kandev made. NOT_FOUND when the directory does not exist yet.
func (d Dirs) Existing(ctx context.Context, t *kanban.Task, sel string) (fsguard.Dir, error) {
	owner, err := d.Owner(ctx, t)
	if err != nil {
		return fsguard.Dir{}, err
	}
	repo, _, err := d.Repository(ctx, owner.ID, sel)
	if err != nil {
		return fsguard.Dir{}, err
	}
	wts, err := d.Store.ListWorktrees(ctx, owner.ID)
	if err != nil {
		return fsguard.Dir{}, err
	}
	if sel == "" && len(wts) > 1 {
		return d.Guard.KandevDir(d.WorktreeDir(owner.ID))
	}
	for _, wt := range wts {
		if repo == nil || wt.RepositoryID == repo.ID {
			return d.Guard.KandevDir(wt.Path)
		}
	}
	if repo != nil && repo.LocalPath != "" {
		return d.Guard.SourceDir(RepositoryPath, repo.LocalPath)
	}
	return d.Guard.KandevDir(d.TaskFolder(owner.ID))
}

// Source returns the git checkout a task's worktrees of repo are made
// from, checked at this use: its local checkout (SourceDir), or the clone
// Kandev keeps of its remote URL (CloneDir: NOT_FOUND before the first
// worktree of it cloned it).
func (d Dirs) Source(repo *kanban.Repository) (fsguard.Dir, error) {
	switch {
	case repo.LocalPath != "":
		return d.Guard.SourceDir(RepositoryPath, repo.LocalPath)
	case repo.RemoteURL != "":
		return d.Guard.CloneDir(repo.RemoteURL)
	}
	return fsguard.Dir{}, kanban.Errorf(kanban.CodeNotFound, "the repository has neither a local path nor a remote URL")
}

// ShortID is the part of a task id that names its branch and worktree
// directory.
func ShortID(taskID string) string {
	id := strings.ReplaceAll(taskID, "-", "")
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}

// WorktreeDir is the task directory of a task's git worktrees:
// <data>/worktrees/<short id>, holding one worktree per repository
// (<data>/worktrees/<short id>/<repository name>).
func (d Dirs) WorktreeDir(taskID string) string {
	return filepath.Join(d.Guard.DataDir(), "worktrees", ShortID(taskID))
}

// RepositoryPath names a task's repository checkout in use-time refusals.
const RepositoryPath = "the task's repository local_path"

// TaskFolder is the per-task folder of a task without a checkout.
func (d Dirs) TaskFolder(taskID string) string {
	return filepath.Join(d.Guard.DataDir(), "tasks", taskID)
}
