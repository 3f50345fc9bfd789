package app

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/vault"
)

// startErr starts a backend on dataDir with sec and returns its start
// error (stopping it when it started).
func startErr(t *testing.T, dataDir string, sec SecurityConfig) error {
	t.Helper()
	b, err := start(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dataDir, Token: "operator-test-token", Out: io.Discard,
		Security: sec, SourceRoots: []string{os.TempDir()}})
	if err == nil {
		if cerr := b.life.close(20 * time.Second); cerr != nil {
			t.Errorf("stop: %v", cerr)
		}
	}
	return err
}

func writeKey(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(vault.GenerateKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The secrets key: created on a first start, required once secrets
// exist (missing or wrong → a clear error at start, never plaintext),
// rotated by kandev secret rotate-key in one transaction.
func TestSecretsKeyAtStartAndRotation(t *testing.T) {
	e := newEnv(t)
	data := e.cfg.DataDir
	if fi, err := os.Stat(filepath.Join(data, SecretsKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("first start: the data dir's key: %v, %v; want a 0600 file", fi, err)
	}
	const value = "forge-token-value-0a1b2c"
	e.dispatch(kanban.ActionSecretSet, action.SecretSetIn{Name: "FORGE", Value: value}, nil)
	e.close()
	for _, f := range []string{"kandev.db", "kandev.db-wal"} {
		if db, err := os.ReadFile(filepath.Join(data, f)); err == nil && bytes.Contains(db, []byte(value)) {
			t.Errorf("%s holds the secret in plaintext", f)
		}
	}

	keyPath := filepath.Join(data, SecretsKeyFile)
	oldKey, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	if err := startErr(t, data, SecurityConfig{}); err == nil || !strings.Contains(err.Error(), "secrets.key is missing") {
		t.Errorf("key missing: got %v, want a clear error", err)
	}
	other := writeKey(t, t.TempDir(), "other.key")
	if err := startErr(t, data, SecurityConfig{SecretsKeyFile: other}); err == nil || !strings.Contains(err.Error(), "encrypted with key") {
		t.Errorf("wrong key: got %v, want the key ids named", err)
	}
	if err := startErr(t, data, SecurityConfig{SecretsKey: "not-a-key"}); err == nil || !strings.Contains(err.Error(), "KANDEV_SECRETS_KEY") {
		t.Errorf("malformed KANDEV_SECRETS_KEY: got %v", err)
	}
	if err := os.WriteFile(keyPath, oldKey, 0o600); err != nil {
		t.Fatal(err)
	}

	// Rotation: a wrong old key changes nothing; the right one moves
	// every secret to the new key, which the backend then starts with.
	var out, errOut bytes.Buffer
	if err := secretCmd(context.Background(), []string{"rotate-key", "--data-dir", data, "--old-key-file", other, "--new-key-file", other}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("rotate with a wrong old key: got %v, want refused", err)
	}
	newKey := writeKey(t, t.TempDir(), "new.key")
	if err := secretCmd(context.Background(), []string{"rotate-key", "--data-dir", data, "--new-key-file", newKey}, &out, &errOut); err != nil {
		t.Fatalf("rotate: %v (%s)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "re-encrypted 1 secrets") {
		t.Errorf("rotate said %q", out.String())
	}
	if err := startErr(t, data, SecurityConfig{}); err == nil {
		t.Error("start with the old key after rotation: got started, want refused")
	}
	e2 := newEnvWith(t, func(c *Config) { c.DataDir, c.Security.SecretsKeyFile = data, newKey })
	if v, err := e2.b.secrets.Resolve(context.Background(), "secret:FORGE"); err != nil || v != value {
		t.Errorf("after rotation: got %q, %v, want the value", v, err)
	}
}
