package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// TestPprofLoopbackOnly checks `serve --pprof`: the profiles are served on
// their own loopback listener, announced on stdout, never on the API
// listener, and a non-loopback address is refused.
func TestPprofLoopbackOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &syncBuffer{}
	ready, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		errc <- Run(ctx, Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Token: "op-token", Pprof: "127.0.0.1:0",
			Logger: slog.New(slog.DiscardHandler), Out: out, Ready: func(a string) { ready <- a }})
	}()
	var api string
	select {
	case api = <-ready:
	case err := <-errc:
		t.Fatalf("Run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not start within 30s")
	}
	m := regexp.MustCompile(`profiles on (http://127\.0\.0\.1:\d+/debug/pprof/)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no profile address in the banner %q", out.String())
	}
	if code := getStatus(t, m[1]+"goroutine?debug=1"); code != http.StatusOK {
		t.Errorf("profile listener: got HTTP %d, want 200", code)
	}
	if code := getStatus(t, "http://"+api+"/debug/pprof/goroutine?debug=1"); code == http.StatusOK {
		t.Error("the API listener serves profiles")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}

	err := Run(t.Context(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Token: "op-token", Pprof: "0.0.0.0:0",
		Logger: slog.New(slog.DiscardHandler), Out: io.Discard})
	if !errors.Is(err, errPprofAddr) {
		t.Errorf("--pprof 0.0.0.0:0: got %v, want %v", err, errPprofAddr)
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}
