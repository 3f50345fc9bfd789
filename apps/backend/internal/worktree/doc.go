// Package worktree reads and writes a task's git worktree with real git:
// the changed files against the merge-base with the base branch (added,
// modified, deleted, renamed; staged, unstaged, untracked; +/- counts),
// the bounded unified diff of one file, the commits on the task branch,
// a commit of all or chosen files, and a push of the task branch to the
// repository's configured remote with a server-side token.
//
// Every git command is bounded in time and output and runs with a
// controlled environment: no system or user configuration, no terminal
// prompts, GIT_DIR and GIT_WORK_TREE set explicitly (a worktree's ".git"
// file is checked to point into its repository before git trusts it),
// hooks, fsmonitor, signing and credential helpers off. Text a caller
// chose (paths, commit messages) reaches git only after "--" or
// "--end-of-options", or on stdin; paths are checked to stay inside the
// worktree and files are read through os.Root. Errors are *Error (or,
// for a page's limit and cursor bounds, kanban's own *kanban.Error): their
// text is safe to show any caller (it never echoes a path, a message or a
// token) and kanban.ErrorCode gives their code; Error.Detail carries the
// redacted git output for the server's log.
//
// It imports the standard library, kanban (error codes, pagination),
// credential and redact; nothing else of Kandev (no store, no action
// layer): the caller resolves a task to a Spec.
package worktree
