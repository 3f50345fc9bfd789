package worktree

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const pushToken = "ghs_PushT0kenFromTheServerSide1234567890"

func token(t *testing.T, s string) credential.Token {
	t.Helper()
	tok, err := credential.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// argvRecorder is a GitPath wrapper that appends every git invocation's
// arguments to a log before running the real git.
func argvRecorder(t *testing.T) (gitPath, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "argv.log")
	real := mustLookGit(t)
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + log + "\nexec " + real + " \"$@\"\n"
	gitPath = filepath.Join(dir, "git")
	must(t, os.WriteFile(gitPath, []byte(script), 0o755))
	return gitPath, log
}

func mustLookGit(t *testing.T) string {
	t.Helper()
	g, err := NewGit(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	return g.path
}

// Push goes over smart HTTP (git http-backend behind auth) with the
// server's token, which appears in no argv, no URL git requested, no
// file of the repository, no error and no detail.
func TestPushOverSmartHTTP(t *testing.T) {
	gitPath, argvLog := argvRecorder(t)
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{GitPath: gitPath})
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken})
	f.repo.Git(t, "push", "--quiet", remote.Dir, "main") // the remote starts with the base branch

	f.write(t, "b.txt", "b\n")
	c, err := f.tree.Commit(t.Context(), CommitRequest{Message: "add b"})
	if err != nil {
		t.Fatal(err)
	}
	basic := Remote{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}}
	got, err := f.tree.Push(t.Context(), basic)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&PushResult{Branch: taskBranch, SHA: c.SHA, Status: "created"}, got); diff != "" {
		t.Fatalf("first push (-want +got):\n%s", diff)
	}
	if ref := remote.Ref(t, "refs/heads/"+taskBranch); ref != c.SHA {
		t.Fatalf("remote has %q, want %s", ref, c.SHA)
	}
	if got, err := f.tree.Push(t.Context(), basic); err != nil || got.Status != "up_to_date" {
		t.Fatalf("second push: got %+v, %v; want up_to_date", got, err)
	}
	f.write(t, "c.txt", "c\n")
	c2, err := f.tree.Commit(t.Context(), CommitRequest{Message: "add c"})
	if err != nil {
		t.Fatal(err)
	}
	bearer := Remote{URL: remote.URL, Auth: Auth{Scheme: AuthBearer, Token: token(t, pushToken)}}
	if got, err := f.tree.Push(t.Context(), bearer); err != nil || got.Status != "updated" || got.SHA != c2.SHA {
		t.Fatalf("bearer push: got %+v, %v; want updated to %s", got, err, c2.SHA)
	}

	checkReceivePackAuthorized(t, remote)
	argv, err := os.ReadFile(argvLog)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(DefaultUsername + ":" + pushToken))
	for _, s := range []string{pushToken, b64, "Authorization"} {
		if strings.Contains(string(argv), s) {
			t.Fatalf("git's argv contains %q:\n%s", s, argv)
		}
	}
	if !strings.Contains(string(argv), "push --porcelain") {
		t.Fatalf("the argv recorder saw no push:\n%s", argv)
	}
	assertNoTokenOnDisk(t, f.repo.Dir, f.wt)
}

// checkReceivePackAuthorized: every request of the receive-pack exchange
// (of three pushes) carried the credentials, and none of them had the
// token in its URL.
func checkReceivePackAuthorized(t *testing.T, remote *gittest.Remote) {
	t.Helper()
	var receive int
	for _, r := range remote.Requests() {
		if strings.Contains(r.URL, pushToken) || strings.Contains(r.URL, "x-access-token") {
			t.Fatalf("request URL %q carries the credentials", r.URL)
		}
		if strings.Contains(r.URL, "git-receive-pack") {
			receive++
			if !r.Authorized {
				t.Fatalf("receive-pack request %s %s was not authorized", r.Method, r.URL)
			}
		}
	}
	if receive < 4 {
		t.Fatalf("got %d receive-pack requests, want the discovery and pack of three pushes", receive)
	}
}

// assertNoTokenOnDisk checks no file of the repository or worktree holds
// the token (the remote URL is never stored with credentials, git config
// never gets them).
func assertNoTokenOnDisk(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), pushToken) {
				t.Fatalf("%s contains the token", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPushRefusals(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken, Username: DefaultUsername})
	f.write(t, "b.txt", "b\n")
	if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "b " + pushToken}); err != nil {
		t.Fatal(err)
	}
	wrong := "ghs_WrongT0kenWrongT0kenWrongT0ken0000"
	for _, tc := range []struct {
		name   string
		remote Remote
		code   kanban.Code
	}{
		{"wrong token", Remote{URL: remote.URL, Auth: Auth{Token: token(t, wrong)}}, kanban.CodeUnauthorized},
		{"wrong user", Remote{URL: remote.URL, Auth: Auth{Username: "oauth2", Token: token(t, pushToken)}}, kanban.CodeUnauthorized},
		{"wrong bearer", Remote{URL: remote.URL, Auth: Auth{Scheme: AuthBearer, Token: token(t, wrong)}}, kanban.CodeUnauthorized},
		{"no token", Remote{URL: remote.URL}, kanban.CodeUnauthorized},
		{"unknown repository", Remote{URL: strings.TrimSuffix(remote.URL, "repo.git") + "other.git", Auth: Auth{Token: token(t, pushToken)}}, kanban.CodeNotFound},
		{"nobody listening", Remote{URL: "http://127.0.0.1:1/repo.git", Auth: Auth{Token: token(t, pushToken)}}, kanban.CodeUnavailable},
		{"bad scheme", Remote{URL: "ftp://example.com/r.git", Auth: Auth{Token: token(t, pushToken)}}, kanban.CodeValidation},
		{"http off loopback", Remote{URL: "http://example.com/r.git"}, kanban.CodeValidation},
		{"credentials in URL", Remote{URL: "https://user:" + wrong + "@example.com/r.git"}, kanban.CodeValidation},
		{"transport helper", Remote{URL: "ext::sh -c touch% /tmp/pwned"}, kanban.CodeValidation},
		{"file URL", Remote{URL: "file:///" + remote.Dir}, kanban.CodeValidation},
		{"local path", Remote{URL: remote.Dir}, kanban.CodeValidation},
		{"option", Remote{URL: "--upload-pack=touch /tmp/pwned"}, kanban.CodeValidation},
		{"query", Remote{URL: "https://example.com/r.git?x=1"}, kanban.CodeValidation},
		{"no path", Remote{URL: "https://example.com/"}, kanban.CodeValidation},
		{"newline", Remote{URL: "https://example.com/r.git\nx"}, kanban.CodeValidation},
		{"bad scheme name", Remote{URL: remote.URL, Auth: Auth{Scheme: "digest", Token: token(t, pushToken)}}, kanban.CodeValidation},
		{"bad user", Remote{URL: remote.URL, Auth: Auth{Username: "a:b", Token: token(t, pushToken)}}, kanban.CodeValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.tree.Push(t.Context(), tc.remote)
			we := wantRefusal(t, err, tc.code, pushToken, wrong, remote.URL, "example.com", "/tmp/pwned")
			for _, s := range []string{pushToken, wrong, base64.StdEncoding.EncodeToString([]byte(DefaultUsername + ":" + wrong))} {
				if strings.Contains(we.Detail(), s) {
					t.Fatalf("detail %q contains a credential", we.Detail())
				}
			}
		})
	}
	if ref := remote.Ref(t, "refs/heads/"+taskBranch); ref != "" {
		t.Fatalf("a refused push reached the remote: %s", ref)
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Fatal("a hostile URL ran a command")
	}
}

func TestPushNonFastForward(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken})
	// Someone else pushed to the task branch first.
	other := f.repo.Worktree(t, "other", "main")
	gittest.WriteFile(t, other, "x.txt", "x\n")
	gittest.Run(t, other, "add", "x.txt")
	gittest.Run(t, other, "commit", "--quiet", "-m", "someone else")
	gittest.Run(t, other, "push", "--quiet", remote.Dir, "other:refs/heads/"+taskBranch)
	before := remote.Ref(t, "refs/heads/"+taskBranch)

	f.write(t, "b.txt", "b\n")
	if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "mine"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.tree.Push(t.Context(), Remote{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}})
	wantRefusal(t, err, kanban.CodeConflict, pushToken)
	if after := remote.Ref(t, "refs/heads/"+taskBranch); after != before {
		t.Fatalf("the remote branch moved from %s to %s: pushes must never force", before, after)
	}
}

// A url.<base>.insteadOf in the repository's config would send the push
// (and perhaps the token) elsewhere: refused.
func TestPushURLRewriteRefused(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken})
	evil := gittest.NewRemote(t, gittest.RemoteOptions{})
	for _, key := range []string{"insteadOf", "pushInsteadOf"} {
		f.repo.Git(t, "config", "url."+evil.URL+"."+key, remote.URL)
		_, err := f.tree.Push(t.Context(), Remote{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}})
		wantRefusal(t, err, kanban.CodeForbidden, evil.URL, remote.URL)
		f.repo.Git(t, "config", "--unset", "url."+evil.URL+"."+key)
	}
	if n := len(evil.Requests()); n != 0 {
		t.Fatalf("the rewritten URL got %d requests", n)
	}
}

// An http.* setting in the repository's config that could route the push
// (a proxy, a CA of the agent's own, extra headers) is refused before git
// sends anything; the settings that only tune transfers are accepted.
func TestPushHTTPConfigRefused(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken})
	evil := gittest.NewRemote(t, gittest.RemoteOptions{})
	for _, kv := range [][2]string{{"http.proxy", evil.URL}, {"http." + remote.URL + ".proxy", evil.URL},
		{"http.sslCAInfo", "/tmp/ca.pem"}, {"http.extraHeader", "X-A: b"}, {"http.curloptResolve", "example.com:443:127.0.0.1"}} {
		f.repo.Git(t, "config", kv[0], kv[1])
		before := len(remote.Requests())
		_, err := f.tree.Push(t.Context(), Remote{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}})
		wantRefusal(t, err, kanban.CodeForbidden, evil.URL, remote.URL, pushToken)
		if n := len(remote.Requests()) - before; n != 0 {
			t.Fatalf("%s: the remote got %d requests after the refusal", kv[0], n)
		}
		f.repo.Git(t, "config", "--unset", kv[0])
	}
	if n := len(evil.Requests()); n != 0 {
		t.Fatalf("the proxy got %d requests", n)
	}
	f.repo.Git(t, "config", "http.postBuffer", "524288000")
	f.write(t, "b.txt", "b\n")
	if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tree.Push(t.Context(), Remote{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}}); err != nil {
		t.Fatalf("push with http.postBuffer set: %v", err)
	}
}

// Every git command is bounded in time and output.
func TestGitBounds(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	for i := range 50 {
		f.write(t, "f"+strconv.Itoa(i)+".txt", "x\n")
	}
	small, err := NewGit(Config{MaxOutput: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = small.Close() }()
	tree, err := small.Open(t.Context(), Spec{Dir: f.wt, Repo: f.repo.Dir, Base: "main", Branch: taskBranch})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tree.Changes(t.Context(), kanban.Page{})
	wantRefusal(t, err, kanban.CodeUnavailable)

	// A git that hangs (here: a wrapper that sleeps) is stopped at Timeout.
	dir := t.TempDir()
	slow := filepath.Join(dir, "git")
	must(t, os.WriteFile(slow, []byte("#!/bin/sh\nsleep 30\n"), 0o755))
	hung, err := NewGit(Config{GitPath: slow, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hung.Close() }()
	start := time.Now()
	_, err = hung.Open(t.Context(), Spec{Dir: f.wt, Repo: f.repo.Dir, Base: "main", Branch: taskBranch})
	wantRefusal(t, err, kanban.CodeUnavailable)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a hung git held the call for %s", d)
	}
}
