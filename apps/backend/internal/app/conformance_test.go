package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// runServe starts Run and returns the bound address, or Run's error if it
// returned before serving.
func runServe(t *testing.T, addr string, conformance bool) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, Config{Addr: addr, DataDir: t.TempDir(), Token: "op-token", Conformance: conformance,
			Logger: slog.New(slog.DiscardHandler), Out: io.Discard, Ready: func(a string) { ready <- a }})
	}()
	started := false
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if started && err != nil {
				t.Errorf("Run after cancel: got %v, want nil", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Run did not return within 15s of cancel")
		}
	})
	select {
	case a := <-ready:
		started = true
		return a, nil
	case err := <-errc:
		errc <- err // for the cleanup
		return "", err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not start within 30s")
	}
	return "", nil
}

func initialize(t *testing.T, url string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestConformanceEndpointOnlyWithFlag(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		addr, err := runServe(t, "127.0.0.1:0", on)
		if err != nil {
			t.Fatalf("conformance=%v: Run: %v", on, err)
		}
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		if got := initialize(t, "http://"+addr+ConformancePath); got != want {
			t.Errorf("conformance=%v: got HTTP %d from %s, want %d", on, got, ConformancePath, want)
		}
		// The product endpoint keeps its authentication either way.
		if got := initialize(t, "http://"+addr+"/mcp"); got != http.StatusUnauthorized {
			t.Errorf("conformance=%v: got HTTP %d from /mcp without a token, want 401", on, got)
		}
	}
}

func TestConformanceRefusedOffLoopback(t *testing.T) {
	t.Parallel()
	_, err := runServe(t, "0.0.0.0:0", true)
	if !errors.Is(err, errConformanceAddr) {
		t.Fatalf("got %v, want errConformanceAddr", err)
	}
}
