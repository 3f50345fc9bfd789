package action

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// gitState is what a refusal must leave as it was: the remote's refs, the
// worktree's HEAD, index and status, and the stored pull requests.
func (f *shipFix) gitState() string {
	f.t.Helper()
	var rows []string
	r, err := f.st.DB().Query(`SELECT id, state, head_sha, version FROM task_pull_requests ORDER BY id`)
	if err != nil {
		f.t.Fatal(err)
	}
	for r.Next() {
		var id, state, sha string
		var v int64
		if err := r.Scan(&id, &state, &sha, &v); err != nil {
			f.t.Fatal(err)
		}
		rows = append(rows, id+state+sha)
	}
	_ = r.Close()
	return strings.Join(rows, ",") + "|" + f.remote.Git(f.t, "for-each-ref") + "|" +
		gittest.Run(f.t, f.wt, "rev-parse", "HEAD") + gittest.Run(f.t, f.wt, "status", "--porcelain=v1", "-uall")
}

// refuseShip is refuse that also checks the git side is unchanged and
// that the refusal names no token.
func (f *shipFix) refuseShip(p Principal, name kanban.Action, in any, code kanban.Code) {
	f.t.Helper()
	before := f.gitState()
	msg := f.refuse(p, name, in, code)
	if strings.Contains(msg, shipToken) {
		f.t.Fatalf("%s: the refusal echoes the token", name)
	}
	if after := f.gitState(); after != before {
		f.t.Fatalf("%s: refused, but the repository, the remote or the pull requests changed", name)
	}
}

// Hostile input is refused before anything is written or sent: a
// session (the reference gives agents no commit, push or pull request
// tool), a URL in the payload, paths and branches that git could misread,
// a token in a commit message, URL rewrites and proxies in the
// repository's config, a remote with no configured account. The token
// never reaches a reply or the log.
func TestShipRefusals(t *testing.T) {
	f := newShipFix(t, shipEntry(t, kanban.ForgeGitHub, "", shipOwner+"/"+shipRepo))
	var logs bytes.Buffer
	f.reg, _ = mustNew(t, Deps{Store: f.st, Publisher: f.pub, FS: f.policy, Ship: f.ship, Git: f.git,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f.write("src/app.go", "package app // changed\n")
	sess := f.session(f.task, kanban.ModeTask)
	for _, a := range []kanban.Action{kanban.ActionTaskCommit, kanban.ActionTaskPush, kanban.ActionTaskPROpen} {
		f.refuseShip(sess, a, map[string]any{"task_id": f.task.ID, "message": "m", "title": "t"}, kanban.CodeForbidden)
	}
	id := map[string]any{"task_id": f.task.ID}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"task_id": f.task.ID}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	f.refuseShip(operator, kanban.ActionTaskPush, with("remote_url", "http://127.0.0.1:1/evil.git"), kanban.CodeValidation)
	f.refuseShip(operator, kanban.ActionTaskPush, with("token", "x"), kanban.CodeValidation)
	f.refuseShip(operator, kanban.ActionTaskCommit, with("message", "leak "+shipToken), kanban.CodeValidation)
	for _, p := range []string{"../outside", "-rf", "src/\x01x", "/etc/passwd", "src/../../x"} {
		f.refuseShip(operator, kanban.ActionTaskCommit, with("message", "m", "paths", []string{p}), kanban.CodeValidation)
	}
	f.refuseShip(operator, kanban.ActionTaskPROpen, with("title", "t", "body", "token: "+shipToken), kanban.CodeValidation)

	// A push goes to the configured remote only: a rewrite of its URL or
	// a proxy in the repository's config is refused.
	evil := gittest.NewRemote(t, gittest.RemoteOptions{})
	call[CommitOut](f.harness, operator, kanban.ActionTaskCommit, with("message", "change"))
	for _, kv := range [][2]string{{"url." + evil.URL + ".insteadOf", f.remote.URL}, {"http.proxy", evil.URL}} {
		f.repo.Git(t, "config", kv[0], kv[1])
		f.refuseShip(operator, kanban.ActionTaskPush, id, kanban.CodeForbidden)
		f.repo.Git(t, "config", "--unset", kv[0])
	}
	if n := len(evil.Requests()); n != 0 {
		t.Fatalf("the other URL got %d requests", n)
	}

	// Branch names git could misread, stored by an older row.
	for _, b := range []string{"-evil", "a..b", "kandev/\x1bx"} {
		f.setBranch(t, b)
		f.refuseShip(operator, kanban.ActionTaskPush, id, kanban.CodeValidation)
	}
	f.setBranch(t, f.branch)

	// A repository whose remote has no account: nothing is pushed.
	if _, err := f.st.DB().Exec(`UPDATE repositories SET remote_url = ? WHERE id = ?`, evil.URL, f.repoID); err != nil {
		t.Fatal(err)
	}
	f.refuseShip(operator, kanban.ActionTaskPush, id, kanban.CodeNotFound)
	if strings.Contains(logs.String(), shipToken) {
		t.Fatal("the log holds the token")
	}
}

// A task without a worktree of its own is refused; so is another
// repository than its worktree's.
func TestShipNeedsTheTaskWorktree(t *testing.T) {
	f := newShipFix(t, shipEntry(t, kanban.ForgeGitHub, "", shipOwner+"/"+shipRepo))
	other := f.task
	f.task = f.harness.task("no worktree")
	f.refuseShip(operator, kanban.ActionTaskCommit, map[string]any{"task_id": f.task.ID, "message": "m"}, kanban.CodeConflict)
	f.task = other
	f.refuseShip(operator, kanban.ActionTaskPush, map[string]any{"task_id": f.task.ID, "repository_id": "other-repo"}, kanban.CodeValidation)
	f.refuseShip(operator, kanban.ActionTaskPRGet, map[string]any{"id": "missing"}, kanban.CodeNotFound)
	f.refuseShip(operator, kanban.ActionTaskPRMerge, map[string]any{"id": "missing", "method": "fast-forward"}, kanban.CodeValidation)
}

func (f *shipFix) setBranch(t *testing.T, b string) {
	t.Helper()
	if _, err := f.st.DB().ExecContext(context.Background(), `UPDATE task_worktrees SET branch = ? WHERE task_id = ?`, b, f.task.ID); err != nil {
		t.Fatal(err)
	}
}
