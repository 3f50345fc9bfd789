package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/remote"
)

// maxFetchBack bounds the bundle of an agent's commits brought back from
// the SSH host.
const maxFetchBack = 512 << 20

// syncedRepo is a local checkout cloned onto the host: where, its branch
// ("HEAD" when detached), and the commit sent.
type syncedRepo struct {
	local, common, branch, orig, remote string
}

// syncRepository clones the local working directory's repository (each
// repository's, for a task with several) into work/ on the host from a
// git bundle of its HEAD and branch; a directory that is no repository
// gives an empty work/.
func (r *run) syncRepository(ctx context.Context, h *sshHost, l *launch) error {
	repos := map[string]string{".": l.workdir} // work/ subdirectory → local checkout
	if _, err := gitOutput(ctx, l.workdir, "rev-parse", "--show-toplevel"); err != nil {
		delete(repos, ".")
		entries, _ := os.ReadDir(l.workdir)
		for _, e := range entries {
			sub := filepath.Join(l.workdir, e.Name())
			if e.IsDir() && sessionIDSafe.MatchString(e.Name()) {
				if _, err := gitOutput(ctx, sub, "rev-parse", "--show-toplevel"); err == nil {
					repos[e.Name()] = sub
				}
			}
		}
	}
	for _, name := range sortedKeys(repos) {
		if err := r.cloneTo(ctx, h, repos[name], path.Join(h.work, name)); err != nil {
			return err
		}
	}
	return nil
}

// cloneTo clones the checkout at dir into remoteDir (which exists) on the host.
func (r *run) cloneTo(ctx context.Context, h *sshHost, dir, remoteDir string) error {
	tmp, err := os.MkdirTemp("", "kandev-bundle-")
	if err != nil {
		return errors.New("could not make a temporary directory for the repository's bundle")
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bundle := filepath.Join(tmp, "repo.bundle")
	refs := []string{"HEAD"}
	if branch, err := gitOutput(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD"); err == nil && branch != "" {
		refs = append(refs, branch)
	}
	orig, err := gitOutput(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return errors.New("could not bundle the task's repository for the SSH host (an empty repository has no commit to send)")
	}
	common, err := gitOutput(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return errors.New("could not read the task's repository")
	}
	if err := git(ctx, dir, append([]string{"bundle", "create", bundle}, refs...)...); err != nil {
		r.m.log.WarnContext(r.ctx, "bundle the repository for the SSH host", "err", err)
		return errors.New("could not bundle the task's repository for the SSH host (an empty repository has no commit to send)")
	}
	f, err := os.Open(bundle) //nolint:gosec // a file this function made
	if err != nil {
		return errors.New("could not read the repository's bundle")
	}
	defer func() { _ = f.Close() }()
	remoteBundle := h.dir + "/repo.bundle"
	if err := h.c.Upload(ctx, remoteBundle, "600", f); err != nil {
		r.m.log.WarnContext(r.ctx, "upload the repository's bundle to the SSH host", "err", err)
		return errors.New("could not upload the task's repository to the SSH host (see the server log)")
	}
	q := remote.Quote
	if _, err := h.c.Run(ctx, "git clone -q "+q(remoteBundle)+" "+q(remoteDir)+" && rm -f "+q(remoteBundle), nil, 1024); err != nil {
		r.m.log.WarnContext(r.ctx, "clone the repository on the SSH host", "err", err)
		return errors.New("could not clone the task's repository on the SSH host (is git installed there? see the server log)")
	}
	h.repos = append(h.repos, syncedRepo{local: dir, common: common, branch: refs[len(refs)-1], orig: orig, remote: remoteDir})
	return nil
}

// fetchBack brings the commits the agent made on the host back when the
// run ends (before the host's directory goes): for each repository whose
// HEAD moved there, a bundle of orig..HEAD is fetched into
// refs/kandev/ssh/<session id>, and the task's branch is fast-forwarded to
// it: in its worktree when that is still there and clean, else (the
// worktree removed, e.g. by an archive) by moving the branch when it
// still names the commit sent. What cannot be fast-forwarded stays at
// that ref, and the conversation says so. Uncommitted changes on the host
// are not brought back.
func (r *run) fetchBack() {
	if r.host == nil || len(r.host.repos) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.keep(), sshTimeout)
	defer cancel()
	for _, repo := range r.host.repos {
		if err := r.fetchRepo(ctx, repo); err != nil {
			r.m.log.WarnContext(r.ctx, "bring the agent's commits back from the SSH host", "err", err)
			r.rec.note("error", "The agent's commits on the SSH host could not be brought back (see the server log).")
		}
	}
}

func (r *run) fetchRepo(ctx context.Context, repo syncedRepo) error {
	h := r.host
	q := remote.Quote
	head, err := h.c.Run(ctx, "git -C "+q(repo.remote)+" rev-parse --verify HEAD", nil, 128)
	if head = strings.TrimSpace(head); err != nil || head == repo.orig {
		return nil //nolint:nilerr // no commit there (or no repository any more): nothing to bring back
	}
	tmp, err := os.MkdirTemp("", "kandev-bundle-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bundle := filepath.Join(tmp, "back.bundle")
	f, err := os.OpenFile(bundle, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // a file in a directory this function made
	if err != nil {
		return err
	}
	err = h.c.RunTo(ctx, "git -C "+q(repo.remote)+" bundle create -q - "+q(repo.orig)+"..HEAD", nil, &capWriter{w: f, left: maxFetchBack})
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	ref := "refs/kandev/ssh/" + r.id
	gitDir := "--git-dir=" + repo.common
	if err := git(ctx, repo.common, gitDir, "fetch", "-q", "--end-of-options", bundle, "+HEAD:"+ref); err != nil {
		return err
	}
	if r.fastForward(ctx, repo, ref) {
		_ = git(ctx, repo.common, gitDir, "update-ref", "-d", "--end-of-options", ref)
		r.rec.note("status", "Brought the agent's commits back from the SSH host onto "+kanban.Clip(repo.branch, 200)+".")
		return nil
	}
	r.rec.note("status", "The agent's commits on the SSH host were brought back to "+ref+" (the branch "+
		kanban.Clip(repo.branch, 200)+" moved meanwhile or its worktree has changes, so it was not fast-forwarded).")
	return nil
}

// capWriter writes to w until left bytes were written, then fails.
type capWriter struct {
	w    io.Writer
	left int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, errors.New("the agent's commits make a bundle over 512 MiB")
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}

// fastForward moves the task's branch to ref when that is a fast-forward.
func (r *run) fastForward(ctx context.Context, repo syncedRepo, ref string) bool {
	if st, err := os.Stat(repo.local); err == nil && st.IsDir() {
		if out, err := gitOutput(ctx, repo.local, "status", "--porcelain"); err != nil || out != "" {
			return false
		}
		return git(ctx, repo.local, "merge", "--ff-only", "-q", "--end-of-options", ref) == nil
	}
	if repo.branch == "HEAD" {
		return false
	}
	gitDir := "--git-dir=" + repo.common
	if git(ctx, repo.common, gitDir, "merge-base", "--is-ancestor", "--end-of-options", repo.orig, ref) != nil {
		return false
	}
	return git(ctx, repo.common, gitDir, "update-ref", "--end-of-options", "refs/heads/"+repo.branch, ref, repo.orig) == nil
}
