package kanban

import "slices"

// The rules below are those of a task that no payload schema can express;
// every bound, enum and pattern of a task's fields is in the contracts of
// the actions that write them (task.create, task.update, task.set_state,
// task.set_title), checked before any handler runs.

// Check refuses a task to create whose title is not a single line, that
// inherits its parent's workspace without a parent, that names a blocker
// twice (the schema's uniqueItems cannot see "self" and the session task's
// own id as one) or whose repository input breaks
// TaskRepositoryInput.Check.
func (c TaskCreate) Check() error {
	if err := SingleLine("title", c.Title); err != nil {
		return err
	}
	if c.WorkspaceMode == WorkspaceInheritParent && c.ParentID == "" {
		return FieldError("workspace_mode", "inherit_parent needs a parent task")
	}
	for i, id := range c.BlockedBy {
		if slices.Contains(c.BlockedBy[:i], id) {
			return FieldError("blocked_by", "must not contain duplicates")
		}
	}
	if c.Repository != nil {
		return c.Repository.Check()
	}
	return nil
}

// Check refuses a repository input with more than one locator, with a
// base branch and no locator, with a base branch that is not a branch name
// (CheckBranch) or a repository URL that is not a remote URL
// (CheckRemoteURL).
func (in TaskRepositoryInput) Check() error {
	locators := 0
	for _, v := range []string{in.RepositoryID, in.LocalPath, in.RepositoryURL} {
		if v != "" {
			locators++
		}
	}
	if locators > 1 {
		return &Error{Code: CodeValidation, Field: "repository",
			Message: "provide at most one of repository_id, local_path, repository_url"}
	}
	if locators == 0 && in.BaseBranch != "" {
		return FieldError("base_branch", "needs one of repository_id, local_path, repository_url")
	}
	if err := CheckBranch("base_branch", in.BaseBranch); err != nil {
		return err
	}
	return CheckRemoteURL("repository_url", in.RepositoryURL)
}

// Check refuses an update whose new title is not a single line.
func (u TaskUpdate) Check() error {
	if u.Title != nil {
		return SingleLine("title", *u.Title)
	}
	return nil
}
