package worktree

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// sizePoll is how often a clone's size on disk is measured.
const sizePoll = 100 * time.Millisecond

// CloneSpec is one clone of a remote into a new directory: the URL (a
// repository's registered remote_url, never a caller's text unchecked),
// the server-side credential, and its bounds.
type CloneSpec struct {
	// URL is the remote: https://host/path, or http:// to a loopback host.
	URL  string
	Auth Auth
	// Dir is where the clone is made (absolute; it must not exist, its
	// parent must). A failed clone leaves nothing there.
	Dir string
	// MaxBytes bounds the clone's size on disk; a clone that grows past
	// it is stopped (CodeValidation: too large) and removed.
	MaxBytes int64
	// Timeout bounds the whole clone (DefaultPushTimeout when zero).
	Timeout time.Duration
	// Progress, when set, is told each phase and whole percent git
	// reports (from its own fixed phase names; no other text).
	Progress func(CloneProgress)
}

// CloneProgress is one step of a clone's progress.
type CloneProgress struct {
	Phase   string `json:"phase"`   // "counting", "compressing", "receiving" (or unpacking), "resolving"
	Percent int    `json:"percent"` // 0–100 within the phase
}

// ErrCloneTooLarge is the cause a clone stopped at its size bound.
var errCloneTooLarge = errors.New("clone over its size bound")

// Clone makes a non-bare repository at spec.Dir with no checkout whose
// branches (refs/heads/*) are the remote's, fetched over HTTP(S) with the
// token in an http.<url>.extraHeader (as Push sends it: never argv, never
// the URL). Git runs with the hardened configuration of every worktree
// command (no hooks, no credential helpers, no protocol but http(s),
// redirects not followed). Refusals: VALIDATION_ERROR (a URL Push would
// refuse; a clone over MaxBytes), UNAUTHORIZED, NOT_FOUND, UNAVAILABLE (as
// for Push). Its messages never echo the URL or the token.
func (g *Git) Clone(ctx context.Context, spec CloneSpec) (err error) {
	u, err := checkRemoteURL(spec.URL)
	if err != nil {
		return err
	}
	header, r, err := authHeader(spec.Auth)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(spec.Dir) || spec.MaxBytes <= 0 {
		return refuse(kanban.CodeInternal, "a clone needs an absolute directory and a size bound")
	}
	if err := os.Mkdir(spec.Dir, 0o700); err != nil {
		return failed(kanban.CodeInternal, "could not create the clone's directory", err.Error())
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(spec.Dir)
		}
	}()
	if res, err := g.run(ctx, call{op: "init", workTree: spec.Dir, args: []string{"init", "--quiet", spec.Dir}}); err != nil || res.exit != 0 {
		return cmpErr(err, gitFailure("init", res))
	}
	scope := "http." + u + "."
	config := [][2]string{{"http.followRedirects", "false"}, {scope + "extraHeader", ""}}
	if header != "" {
		config = append(config, [2]string{scope + "extraHeader", header})
	}
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = DefaultPushTimeout
	}
	watched, stop := watchSize(ctx, spec.Dir, spec.MaxBytes)
	res, err := g.run(watched, call{op: "fetch", gitDir: filepath.Join(spec.Dir, ".git"), workTree: spec.Dir,
		args:   []string{"fetch", "--progress", "--no-tags", "--update-head-ok", "--end-of-options", u, "+refs/heads/*:refs/heads/*"},
		config: config, timeout: timeout, redact: r, tap: &progressTap{report: spec.Progress}})
	over := stop()
	switch {
	case over:
		return invalid("remote_url", "the repository is larger than the clone size bound ("+strconv.FormatInt(spec.MaxBytes, 10)+" bytes); nothing was kept")
	case err != nil:
		return err
	case res.exit != 0:
		return cloneFailure(res.stderr)
	}
	return nil
}

// cmpErr returns err when set, else alt.
func cmpErr(err error, alt *Error) error {
	if err != nil {
		return err
	}
	return alt
}

// cloneFailure maps a failed fetch to a safe error (pushFailure's causes).
func cloneFailure(stderr string) *Error {
	switch {
	case containsAny(stderr, "Authentication failed", "could not read Username", "could not read Password", "terminal prompts disabled",
		"returned error: 401", "returned error: 403", "Invalid username or password"):
		return failed(kanban.CodeUnauthorized, "the remote refused the server's credentials for this repository", stderr)
	case containsAny(stderr, "Could not resolve host", "Failed to connect", "Connection refused", "Connection timed out", "Operation timed out"):
		return failed(kanban.CodeUnavailable, "the remote could not be reached", stderr)
	case containsAny(stderr, "returned error: 404", "not found", "does not appear to be a git repository"):
		return failed(kanban.CodeNotFound, "the remote repository was not found (or the credentials cannot see it)", stderr)
	case containsAny(stderr, "redirect"):
		return failed(kanban.CodeUnavailable, "the remote answered with a redirect, which clones do not follow: register its final URL", stderr)
	}
	return failed(kanban.CodeInternal, "git fetch failed", stderr)
}

// watchSize returns a context cancelled when dir grows past max, and a
// stop that ends the watch and reports whether it did (measuring once
// more, for a clone that finished between two measurements).
func watchSize(ctx context.Context, dir string, max int64) (context.Context, func() bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(sizePoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if dirSize(dir, max) > max {
					cancel(errCloneTooLarge)
					return
				}
			}
		}
	})
	return ctx, func() bool {
		close(done)
		wg.Wait()
		over := errors.Is(context.Cause(ctx), errCloneTooLarge) || dirSize(dir, max) > max
		cancel(nil)
		return over
	}
}

// dirSize sums the sizes of the regular files under dir, stopping once
// past max.
func dirSize(dir string, max int64) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // a file git removed meanwhile: not counted
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		if n > max {
			return filepath.SkipAll
		}
		return nil
	})
	return n
}

// progressLine is one line of git's progress ("Receiving objects:  45% (…").
var progressLine = regexp.MustCompile(`^(?:remote: )?(Counting|Compressing|Receiving|Unpacking|Resolving) (?:objects|deltas):\s+(\d{1,3})%`)

// progressTap turns git's progress output into CloneProgress reports: one
// per phase and percent change. Lines end with \r or \n; a partial line
// is kept (bounded) until its end arrives.
type progressTap struct {
	report func(CloneProgress)
	line   []byte
	last   CloneProgress
}

func (p *progressTap) Write(b []byte) (int, error) {
	if p.report == nil {
		return len(b), nil
	}
	for _, c := range b {
		if c != '\r' && c != '\n' {
			if len(p.line) < 256 {
				p.line = append(p.line, c)
			}
			continue
		}
		p.emit()
		p.line = p.line[:0]
	}
	return len(b), nil
}

func (p *progressTap) emit() {
	m := progressLine.FindSubmatch(p.line)
	if m == nil {
		return
	}
	pct, err := strconv.Atoi(string(m[2]))
	if err != nil || pct > 100 {
		return
	}
	names := map[string]string{"Counting": "counting", "Compressing": "compressing", "Receiving": "receiving", "Unpacking": "receiving", "Resolving": "resolving"}
	cur := CloneProgress{Phase: names[string(m[1])], Percent: pct}
	if cur != p.last {
		p.last = cur
		p.report(cur)
	}
}
