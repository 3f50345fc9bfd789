package logctx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/redact"
)

func TestHandlerAddsIDsAndRedacts(t *testing.T) {
	const secret = "canary-value-4711"
	var buf bytes.Buffer
	log := slog.New(New(slog.NewJSONHandler(&buf, nil), redact.New(secret)))
	ctx := WithSession(WithRequest(context.Background(), "req1"), "sess1")
	log.With("header", "Authorization: Bearer abcdefgh").InfoContext(ctx, "saw "+secret,
		"err", errors.New("dial postgres://u:hunter22@db/x"),
		slog.Group("g", slog.String("v", secret)), "n", 3)
	log.Info("no ids", "session_id", "given")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	for _, bad := range []string{secret, "hunter22", "abcdefgh"} {
		if strings.Contains(buf.String(), bad) {
			t.Fatalf("log holds %q: %s", bad, buf.String())
		}
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if first[RequestKey] != "req1" || first[SessionKey] != "sess1" || first["n"] != 3.0 {
		t.Fatalf("got %v, want request_id req1, session_id sess1, n 3", first)
	}
	if _, ok := second[RequestKey]; ok || second[SessionKey] != "given" {
		t.Fatalf("got %v, want no request_id and the given session_id", second)
	}
}

func TestNewRequestIDIsFresh(t *testing.T) {
	a, b := NewRequestID(), NewRequestID()
	if len(a) != 16 || a == b {
		t.Fatalf("got %q and %q, want two different 16-digit ids", a, b)
	}
}
