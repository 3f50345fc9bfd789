package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// runDoctorBinary runs the real `kandev doctor` with env (PATH replaced
// when given) and returns its output and whether it exited 0.
func runDoctorBinary(t *testing.T, path string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(kandevBinary(t), append([]string{"doctor"}, args...)...)
	cmd.Env = append(os.Environ(), "KANDEV_DATABASE_URL=", "KANDEV_AGENTS_FILE=")
	if path != "" {
		cmd.Env = append(cmd.Env, "PATH="+path)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run kandev doctor: %v", err)
		}
	}
	return string(out), err == nil
}

// TestDoctorReportsMissingGit runs kandev doctor with a PATH that holds
// no git: it reports git missing with a fix and exits non-zero.
func TestDoctorReportsMissingGit(t *testing.T) {
	t.Parallel()
	out, ok := runDoctorBinary(t, t.TempDir(), "--data-dir", t.TempDir())
	if ok {
		t.Fatalf("kandev doctor exited 0 without git on PATH:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^FAIL\s+git\s+git was not found on PATH\n\s+fix: install git`).MatchString(out) {
		t.Fatalf("got:\n%s\nwant a FAIL git line with its fix", out)
	}
	if !strings.Contains(out, "doctor: 1 check(s) failed") {
		t.Fatalf("got:\n%s\nwant exactly one failed check", out)
	}
}

// TestDoctorHealthySetup runs kandev doctor on a data dir whose database
// is at this binary's schema: every check is listed ok (or skipped, for
// what is not configured) and it exits 0.
func TestDoctorHealthySetup(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed here")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, store.DatabaseFile)
	if out, err := exec.Command(kandevBinary(t), "db", "migrate", "--database", "sqlite:"+db).CombinedOutput(); err != nil {
		t.Fatalf("db migrate: %v: %s", err, out)
	}
	out, ok := runDoctorBinary(t, "", "--data-dir", dir)
	if !ok {
		t.Fatalf("kandev doctor failed on a healthy setup:\n%s", out)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || line == "all checks passed" {
			continue
		}
		if f[0] != checkOK && f[0] != checkSkip {
			t.Fatalf("got line %q, want every check ok or skipped:\n%s", line, out)
		}
		if f[0] == checkOK {
			seen[f[1]] = line
		}
	}
	for _, name := range []string{"git", "data", "disk", "database", "agent"} {
		if seen[name] == "" {
			t.Fatalf("no ok %s line in:\n%s", name, out)
		}
	}
	if !strings.Contains(seen["agent"], "mock-agent installed") || !strings.Contains(seen["database"], "(this binary's)") {
		t.Fatalf("got agent %q and database %q, want the mock agent installed and the database at this binary's schema", seen["agent"], seen["database"])
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "all checks passed") {
		t.Fatalf("got:\n%s\nwant it to end with all checks passed", out)
	}
}
