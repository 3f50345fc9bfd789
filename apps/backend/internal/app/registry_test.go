package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runRegistered runs a real backend on 127.0.0.1:0 that records itself in
// registry, and returns its URL and a stop function that waits for Run.
func runRegistered(t *testing.T, registry, dataDir, token string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Addr: "127.0.0.1:0", DataDir: dataDir, Token: token, Registry: registry,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Ready: func(addr string) { ready <- addr }})
	}()
	var url string
	select {
	case addr := <-ready:
		url = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("backend did not start within 20s")
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("backend did not stop within 20s")
		}
	}
	t.Cleanup(stop)
	return url, stop
}

func TestOperatorCommandsFindARunningBackendsToken(t *testing.T) {
	registry, dataDir := t.TempDir(), t.TempDir()
	url, stop := runRegistered(t, registry, dataDir, "")
	raw, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(raw))
	// A command started anywhere, with the default data dir that holds no
	// token, finds the backend at its address (also spelled localhost).
	missing := filepath.Join(t.TempDir(), ".kandev")
	for _, u := range []string{url, strings.Replace(url, "127.0.0.1", "localhost", 1)} {
		got, err := FindOperatorToken(TokenLookup{BackendURL: u, DataDir: missing, Registry: registry})
		if err != nil || got != want {
			t.Fatalf("FindOperatorToken(%s) = %q, %v; want the backend's token", u, got, err)
		}
	}
	// KANDEV_TOKEN and an explicit data dir win over the registry.
	if got, _ := FindOperatorToken(TokenLookup{Env: "from-env", BackendURL: url, Registry: registry}); got != "from-env" {
		t.Errorf("with KANDEV_TOKEN: got %q, want from-env", got)
	}
	if _, err := FindOperatorToken(TokenLookup{BackendURL: url, DataDir: missing, DataDirSet: true, Registry: registry}); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Errorf("explicit empty data dir: got %v, want a missing-token error", err)
	}
	stop()
	entries, err := os.ReadDir(registry)
	if err != nil || len(entries) != 0 {
		t.Errorf("registry after stop: %v entries (%v), want none", len(entries), err)
	}
	_, err = FindOperatorToken(TokenLookup{BackendURL: url, DataDir: missing, Registry: registry})
	for _, part := range []string{"no operator token for " + url, "KANDEV_TOKEN", "--data-dir DIR"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("after stop: got %v, want an error naming %q", err, part)
		}
	}
}

func TestRegistrySaysWhenTheBackendTookItsTokenFromTheEnvironment(t *testing.T) {
	registry := t.TempDir()
	url, _ := runRegistered(t, registry, t.TempDir(), "operator-from-env")
	_, err := FindOperatorToken(TokenLookup{BackendURL: url, DataDir: filepath.Join(t.TempDir(), "none"), Registry: registry})
	if err == nil || !strings.Contains(err.Error(), "takes its operator token from KANDEV_TOKEN") {
		t.Fatalf("got %v, want the KANDEV_TOKEN hint", err)
	}
	if strings.Contains(err.Error(), "operator-from-env") {
		t.Fatal("the error echoes the token")
	}
}

func TestRegistryIgnoresRecordsOfStoppedProcesses(t *testing.T) {
	registry, dataDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, TokenFile), []byte("stale-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := registerBackend(registry, "127.0.0.1:45678", BackendRecord{URL: "http://127.0.0.1:45678", PID: gone.Process.Pid,
		DataDir: dataDir, TokenFile: filepath.Join(dataDir, TokenFile)}); err != nil {
		t.Fatal(err)
	}
	tok, err := FindOperatorToken(TokenLookup{BackendURL: "http://127.0.0.1:45678", DataDir: filepath.Join(t.TempDir(), "none"), Registry: registry})
	if err == nil {
		t.Fatalf("got token %q from a stopped backend's record, want an error", tok)
	}
}

func TestRecordNames(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:38429": "127.0.0.1_38429.json",
		"localhost:1":     "127.0.0.1_1.json",
		"0.0.0.0:2":       "127.0.0.1_2.json",
		"[::]:3":          "127.0.0.1_3.json",
		"[::1]:4":         "__1_4.json",
		"10.1.2.3:5":      "10.1.2.3_5.json",
	} {
		if got, err := recordName(addr); err != nil || got != want {
			t.Errorf("recordName(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := recordName("no-port"); err == nil {
		t.Error("recordName without a port: want an error")
	}
}
