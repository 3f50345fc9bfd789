package app

import (
	"database/sql"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/sshtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// TestDoctorSSHProfiles runs the real kandev doctor on a database with
// SSH executor profiles against a real sshd: the reachable one is ok; an
// unknown host, a changed host key, a key the host refuses and a port
// nothing listens on each fail with their fix; an unknown host of a
// profile that trusts on first use is a warning, and doctor records no
// key for it.
func TestDoctorSSHProfiles(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	other := sshtest.Require(t) // its user key is not authorized on s
	dir := t.TempDir()
	db := filepath.Join(dir, store.DatabaseFile)
	if out, err := exec.Command(kandevBinary(t), "db", "migrate", "--database", "sqlite:"+db).CombinedOutput(); err != nil {
		t.Fatalf("db migrate: %v: %s", err, out)
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	root := t.TempDir()
	with := func(k string, v any, more ...any) map[string]any {
		c := s.Config(root)
		c[k] = v
		for i := 0; i+1 < len(more); i += 2 {
			c[more[i].(string)] = more[i+1]
		}
		return c
	}
	insertSSHProfiles(t, db, map[string]map[string]any{
		"a-good": s.Config(root), "b-unknown": with("known_hosts_file", empty), "c-changed": with("known_hosts_file", s.WrongKnownHosts(t)),
		"d-refused": with("key_file", other.KeyFile), "e-down": with("port", closed),
		"f-tofu": with("known_hosts_file", empty, "trust_on_first_use", true),
	})
	out, ok := runDoctorBinary(t, "", "--data-dir", dir)
	if ok {
		t.Fatalf("kandev doctor exited 0 with failing SSH profiles:\n%s", out)
	}
	for _, want := range []string{
		`(?m)^ok\s+ssh\s+profile a-good: \S+@127\.0\.0\.1:\d+ is reachable`,
		`(?m)^FAIL\s+ssh\s+profile b-unknown: .*not in the known_hosts file.*\n\s+fix: record the host's key after checking its fingerprint: ssh-keyscan`,
		`(?m)^FAIL\s+ssh\s+profile c-changed: .*key differs.*\n\s+fix: if the host was reinstalled, drop its old key \(ssh-keygen -R`,
		`(?m)^FAIL\s+ssh\s+profile d-refused: .*authentication failed.*\n\s+fix: add the public key of `,
		`(?m)^FAIL\s+ssh\s+profile e-down: .*did not answer on its SSH port\n\s+fix: check the host and port`,
		`(?m)^warn\s+ssh\s+profile f-tofu: .*recorded at the first launch \(trust_on_first_use\)\n\s+fix: `,
		`doctor: 4 check\(s\) failed`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("got:\n%s\nwant a match of %s", out, want)
		}
	}
	if b, err := os.ReadFile(empty); err != nil || len(b) != 0 {
		t.Fatalf("doctor wrote the known_hosts file: %q %v", b, err)
	}
}

// insertSSHProfiles adds exec-ssh (as the seed does) with the profiles.
func insertSSHProfiles(t *testing.T, path string, profiles map[string]map[string]any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	exID := kanban.NewID()
	if _, err := db.Exec(`INSERT INTO executors (id, name, type, description, created_at) VALUES (?, 'exec-ssh', 'ssh', '', '')`, exID); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range profiles {
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO executor_profiles (id, executor_id, name, config, created_at, updated_at) VALUES (?, ?, ?, ?, '', '')`,
			kanban.NewID(), exID, name, string(b)); err != nil {
			t.Fatal(err)
		}
	}
}
