// Package gittest gives tests real git: throwaway repositories with
// worktrees (Repo), and a bare repository served over git's smart HTTP
// protocol on 127.0.0.1:0 by `git http-backend` itself, run through
// net/http/cgi, behind Basic or Bearer authentication (Remote) — so a push
// goes over HTTP with credentials exactly as it would to a forge.
//
// It runs the machine's git (Debian's git package; nothing is
// downloaded) with no system or user configuration. It imports only the
// standard library; nothing of Kandev.
package gittest

import (
	"crypto/subtle"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go has long fixed httpoxy; CGI is how git http-backend runs
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RemoteOptions configure a Remote.
type RemoteOptions struct {
	// Token, when set, is required on every request: as the password of
	// Basic authentication (any user name unless Username is set) or as a
	// Bearer token. Empty serves without authentication.
	Token    string
	Username string
	// Name is the repository's name in the URL (default "repo.git").
	Name string
}

// Request is one HTTP request the remote received.
type Request struct {
	Method     string
	URL        string // path and query as received
	Header     http.Header
	Authorized bool
}

// Remote is a bare repository served over smart HTTP.
type Remote struct {
	// URL is the repository's URL (http://127.0.0.1:PORT/NAME).
	URL string
	// Dir is the bare repository on disk.
	Dir string

	opts RemoteOptions
	git  string
	mu   sync.Mutex
	reqs []Request
}

// NewRemote creates an empty bare repository (default branch main, pushes
// accepted) and serves it until the test ends.
func NewRemote(t testing.TB, opts RemoteOptions) *Remote {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "repo.git"
	}
	root := t.TempDir()
	r := &Remote{Dir: filepath.Join(root, opts.Name), opts: opts, git: gitPath(t)}
	run(t, root, "init", "--quiet", "--bare", "--initial-branch=main", r.Dir)
	run(t, r.Dir, "config", "http.receivepack", "true")
	backend := &cgi.Handler{
		Path: r.git,
		Args: []string{"http-backend"},
		Dir:  root,
		Env:  append(cleanEnv(), "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=kandev-test"),
		// http-backend's complaints (an unknown repository) are the
		// client's to report; keep them out of the test output.
		Stderr: io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ok := r.authorized(req)
		r.mu.Lock()
		r.reqs = append(r.reqs, Request{Method: req.Method, URL: req.URL.RequestURI(), Header: req.Header.Clone(), Authorized: ok})
		r.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="kandev-test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/" + opts.Name
	return r
}

func (r *Remote) authorized(req *http.Request) bool {
	if r.opts.Token == "" {
		return true
	}
	h := req.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch strings.ToLower(scheme) {
	case "bearer":
		return subtle.ConstantTimeCompare([]byte(cred), []byte(r.opts.Token)) == 1
	case "basic":
		b, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return false
		}
		user, pass, _ := strings.Cut(string(b), ":")
		return (r.opts.Username == "" || user == r.opts.Username) && subtle.ConstantTimeCompare([]byte(pass), []byte(r.opts.Token)) == 1
	}
	return false
}

// Requests returns the requests received so far.
func (r *Remote) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Ref returns the commit a ref of the bare repository names ("" if none).
func (r *Remote) Ref(t testing.TB, ref string) string {
	t.Helper()
	out, err := command(r.git, r.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Git runs git in the bare repository and returns its output.
func (r *Remote) Git(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, r.Dir, args...)
}

func gitPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is not installed (apt-get install git)")
	}
	return p
}

// cleanEnv is git's environment in tests: no system or user configuration,
// no prompts, a fixed identity and clock zone.
func cleanEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join("/nonexistent", "kandev-gittest"), "LC_ALL=C", "TZ=UTC",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Test Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Author", "GIT_COMMITTER_EMAIL=author@example.com",
	}
}

func command(git, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(git, args...) //nolint:gosec // G204: the machine's git with a test's arguments
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	return cmd
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := command(gitPath(t), dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
