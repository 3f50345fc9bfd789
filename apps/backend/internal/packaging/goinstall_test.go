package packaging

import (
	"archive/zip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/kandev/kandev/apps/backend"

// TestGoInstallAtVersion: `go install …/cmd/kandev@VERSION` works on a
// machine without the checkout. The module (its committed and new,
// not ignored files, as a tag would hold them) is served as VERSION from
// a file:// module proxy; go install runs outside the repository with
// no go.work, so a replace directive, a go.work dependency or a file
// outside the module would fail it. The installed binary reports VERSION
// from its build info (no -ldflags), serves /healthz and the board's
// embedded assets.
func TestGoInstallAtVersion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (a go install from a module proxy): skipped under -short")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to list the module's files")
	}
	// A version of this run's own: the module cache is shared, and the
	// version is removed from it again when the test ends.
	version := "v0.0.1-packaging-test." + strconv.FormatInt(time.Now().UnixNano(), 10)
	root := moduleRoot(t)
	cache := strings.TrimSpace(run(t, time.Minute, root, nil, "go", "env", "GOMODCACHE"))
	t.Cleanup(func() { forgetVersion(t, cache, version) })
	proxy := t.TempDir()
	writeModuleVersion(t, root, proxy, version)

	work, bin := t.TempDir(), t.TempDir()
	orig := strings.TrimSpace(run(t, time.Minute, root, nil, "go", "env", "GOPROXY"))
	start := time.Now()
	run(t, 15*time.Minute, work, []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOBIN=" + bin,
		"GOPROXY=file://" + filepath.ToSlash(proxy) + "," + orig, "GONOSUMDB=github.com/kandev/kandev"},
		"go", "install", modulePath+"/cmd/kandev@"+version)
	t.Logf("go install took %s", time.Since(start).Round(time.Second))
	kandev := filepath.Join(bin, "kandev")

	if out := run(t, time.Minute, work, nil, kandev, "version"); !strings.HasPrefix(out, "kandev "+version+"\n") {
		t.Fatalf("kandev version: got %q, want it to start with %q", out, "kandev "+version)
	}
	url := serve(t, kandev, nil)
	if code, body := get(t, url+"/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("/healthz: got %d %q, want 200 ok", code, body)
	}
	want, err := os.ReadFile(filepath.Join(root, "internal/board/static/public/style.css"))
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, url+"/public/style.css"); code != 200 || body != string(want) {
		t.Fatalf("/public/style.css: got %d and %d bytes, want 200 and the embedded %d bytes", code, len(body), len(want))
	}
}

// writeModuleVersion lays out the module at root as version of
// modulePath in a file:// module proxy (the GOPROXY protocol's list,
// .info, .mod and .zip). The zip holds what `git ls-files` names, less
// nested modules (directories with a go.mod of their own), as the go
// command's zips do.
func writeModuleVersion(t *testing.T, root, proxy, version string) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := strings.Split(strings.TrimRight(run(t, time.Minute, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "."), "\x00"), "\x00")
	nested := map[string]bool{}
	for _, f := range files {
		if path.Base(f) == "go.mod" && path.Dir(f) != "." {
			nested[path.Dir(f)] = true
		}
	}
	z, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(z)
	n := 0
	for _, f := range files {
		if f == "" || inNested(f, nested) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(modulePath + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		version + ".mod":  string(mod),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("module zip: %d files", n)
}

// inNested reports whether f lies in one of the nested modules.
func inNested(f string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// forgetVersion removes version of modulePath from the module cache
// (its download files and its extracted, read-only tree).
func forgetVersion(t *testing.T, cache, version string) {
	if cache == "" {
		return
	}
	tree := filepath.Join(cache, filepath.FromSlash(modulePath)+"@"+version)
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755) //nolint:gosec // a tree this test made, to remove it
		}
		return nil
	})
	at := filepath.Join(cache, "cache", "download", filepath.FromSlash(modulePath), "@v")
	dl, _ := filepath.Glob(filepath.Join(at, version+".*"))
	for _, p := range append(dl, tree, filepath.Join(at, "list")) {
		if err := os.RemoveAll(p); err != nil {
			t.Errorf("remove %s from the module cache: %v", p, err)
		}
	}
}
