package worktree

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// remoteWith returns a remote served over smart HTTP behind pushToken
// whose main and feature branches come from a fresh repository.
func remoteWith(t *testing.T, files map[string]string) *gittest.Remote {
	t.Helper()
	repo := gittest.NewRepo(t, files)
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: pushToken})
	repo.Git(t, "branch", "feature")
	repo.Git(t, "push", "--quiet", remote.Dir, "main", "feature")
	return remote
}

// Clone fetches every branch over smart HTTP with the server's token (in
// no argv), checks nothing out, and reports progress in git's phases.
func TestCloneOverSmartHTTP(t *testing.T) {
	gitPath, argvLog := argvRecorder(t)
	g, err := NewGit(Config{GitPath: gitPath})
	must(t, err)
	t.Cleanup(func() { _ = g.Close() })
	remote := remoteWith(t, map[string]string{"a.txt": "a\n"})
	dir := filepath.Join(t.TempDir(), "clone")
	var mu sync.Mutex
	var phases []string
	err = g.Clone(t.Context(), CloneSpec{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}, Dir: dir, MaxBytes: 1 << 20,
		Progress: func(p CloneProgress) { mu.Lock(); phases = append(phases, p.Phase); mu.Unlock() }})
	must(t, err)
	for _, ref := range []string{"refs/heads/main", "refs/heads/feature"} {
		if got, want := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", ref)), remote.Ref(t, ref); got != want {
			t.Fatalf("%s: got %s, want %s", ref, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the clone checked files out: %v", err)
	}
	// git delays its local phases' progress (a small fetch ends first);
	// the remote's counting is always reported.
	if !strings.Contains(strings.Join(phases, " "), "counting") {
		t.Fatalf("got progress phases %q, want counting among them", phases)
	}
	argv, err := os.ReadFile(argvLog) //nolint:gosec // the test's own log
	must(t, err)
	if strings.Contains(string(argv), pushToken) {
		t.Fatal("the token reached git's argv")
	}
}

// A clone past its size bound is stopped and leaves nothing behind; a
// URL a push would refuse is refused before anything is made; bad
// credentials are UNAUTHORIZED and leave nothing.
func TestCloneRefusals(t *testing.T) {
	g, err := NewGit(Config{})
	must(t, err)
	t.Cleanup(func() { _ = g.Close() })
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	remote := remoteWith(t, map[string]string{"big.bin": string(big)})
	root := t.TempDir()
	cases := map[string]struct {
		spec CloneSpec
		code kanban.Code
	}{
		"over the size bound": {CloneSpec{URL: remote.URL, Auth: Auth{Token: token(t, pushToken)}, MaxBytes: 1 << 20}, kanban.CodeValidation},
		"wrong token":         {CloneSpec{URL: remote.URL, Auth: Auth{Token: token(t, "ghs_NotTheRightTokenAtAll1234567890ab")}, MaxBytes: 8 << 20}, kanban.CodeUnauthorized},
		"file URL":            {CloneSpec{URL: "file://" + remote.Dir, MaxBytes: 8 << 20}, kanban.CodeValidation},
		"transport helper":    {CloneSpec{URL: "ext::sh -c touch% /tmp/pwned", MaxBytes: 8 << 20}, kanban.CodeValidation},
		"option-shaped":       {CloneSpec{URL: "--upload-pack=touch /tmp/pwned", MaxBytes: 8 << 20}, kanban.CodeValidation},
		"credentials in URL":  {CloneSpec{URL: strings.Replace(remote.URL, "http://", "http://u:"+pushToken+"@", 1), MaxBytes: 8 << 20}, kanban.CodeValidation},
		"plain http":          {CloneSpec{URL: "http://example.com/o/r.git", MaxBytes: 8 << 20}, kanban.CodeValidation},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.spec.Dir = filepath.Join(root, strings.ReplaceAll(name, " ", "-"))
			err := g.Clone(t.Context(), c.spec)
			if got := kanban.ErrorCode(err); got != c.code {
				t.Fatalf("got %v (%s), want %s", err, got, c.code)
			}
			if strings.Contains(err.Error(), pushToken) || strings.Contains(err.Error(), remote.URL) {
				t.Fatalf("the error %q echoes the URL or token", err)
			}
			if _, err := os.Stat(c.spec.Dir); !os.IsNotExist(err) {
				t.Fatalf("the refused clone left %s behind: %v", c.spec.Dir, err)
			}
		})
	}
}
