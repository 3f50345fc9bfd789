package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/board"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
	"github.com/kandev/kandev/apps/backend/internal/logring"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// withLogRing returns log teed into a ring of its recent records (info and
// above; the last logring.DefaultRecords records or DefaultBytes bytes):
// the backend logs to stderr only, and diagnostic bundles include them.
// Every record first gets the request and session ids its context carries
// and is redacted (secrets, the given ones by value, credentials by
// shape, red's known values, which it learns as secrets are set), so
// neither stderr nor the ring ever holds one.
func withLogRing(log *slog.Logger, red *redact.Redactor) (*slog.Logger, *logring.Ring) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ring := logring.New(logring.DefaultRecords, logring.DefaultBytes)
	return slog.New(logctx.New(ring.Tee(log.Handler(), slog.LevelInfo), red)), ring
}

// diagnostics is what only the application gives the action layer's
// diagnostic bundles: its configuration, store, logs, agents and board
// (each built before the action layer).
func (b *backend) diagnostics(cfg Config, ring *logring.Ring) action.Diagnostics {
	entry := func(name string, build func(ctx context.Context, c action.DiagnosticCall) ([]byte, error)) action.DiagnosticEntry {
		return action.DiagnosticEntry{Name: name, Build: build}
	}
	return action.Diagnostics{
		Version: toolserver.Version,
		Secrets: b.diagnosticSecrets,
		Entries: []action.DiagnosticEntry{
			entry("backend/config.json", func(ctx context.Context, c action.DiagnosticCall) ([]byte, error) {
				return b.configEntry(ctx, cfg, c.Task.WorkspaceID)
			}),
			entry("backend/store.json", func(ctx context.Context, _ action.DiagnosticCall) ([]byte, error) {
				r, err := b.store.Report(ctx)
				if err != nil {
					return nil, err
				}
				return indent(r)
			}),
			entry("backend/log.txt", func(context.Context, action.DiagnosticCall) ([]byte, error) {
				return logEntry(ring), nil
			}),
			entry("backend/agent-stderr.txt", func(_ context.Context, c action.DiagnosticCall) ([]byte, error) {
				return b.stderrEntry(c), nil
			}),
			entry("frontend/board.json", func(context.Context, action.DiagnosticCall) ([]byte, error) {
				return boardEntry(b.board)
			}),
		},
	}
}

// diagnosticSecrets are the values redacted from bundles wherever they
// appear: the operator token, every named secret's value, the secret-named variables of the backend's
// environment (which agents may inherit) and every configured MCP header
// and environment value (of the first maxSecretProfiles profiles).
func (b *backend) diagnosticSecrets(ctx context.Context) ([]string, error) {
	out := redact.EnvSecrets(os.Environ())
	if b.cred.clear != "" {
		out = append(out, b.cred.clear)
	}
	named, err := b.secrets.Values(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, named...)
	profiles, more, err := b.mcpProfiles(ctx, "", maxSecretProfiles)
	if err != nil {
		return nil, err
	}
	if more {
		b.log.Warn("diagnostic bundle: MCP secrets of profiles beyond the first few thousand are redacted by shape only")
	}
	for _, p := range profiles {
		for _, s := range p.cfg.Servers {
			for _, v := range s.Headers {
				out = append(out, v)
			}
			for _, v := range s.Env {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// logEntry is the ring's records, oldest first, after a line saying how
// many older ones it no longer holds.
func logEntry(ring *logring.Ring) []byte {
	recs, dropped := ring.Records()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# kandev serve: the last %d log records (info and above); %d older records are no longer kept\n", len(recs), dropped)
	for _, r := range recs {
		buf.Write(r)
	}
	return buf.Bytes()
}

// stderrEntry is the end of the stderr of the agents the runtime runs for
// the call's sessions, the calling session first.
func (b *backend) stderrEntry(c action.DiagnosticCall) []byte {
	if b.agents == nil {
		return nil
	}
	ids := []string{}
	if c.SessionID != "" {
		ids = append(ids, c.SessionID)
	}
	for _, s := range c.Sessions {
		if s.ID != c.SessionID {
			ids = append(ids, s.ID)
		}
	}
	var buf bytes.Buffer
	for _, id := range ids {
		if tail := b.agents.StderrTail(id); tail != "" {
			fmt.Fprintf(&buf, "== agent stderr of session %s (its end) ==\n%s\n", id, tail)
		}
	}
	return buf.Bytes()
}

// boardEntry describes the board the backend serves: its build and every
// file with its size and hash. The board reports no browser-side errors
// to the backend, so there are none to include.
func boardEntry(bd *board.Board) ([]byte, error) {
	assets := bd.Assets()
	total := 0
	for _, a := range assets {
		total += a.Bytes
	}
	return indent(map[string]any{
		"kandev":         toolserver.Version,
		"served_at":      "/",
		"embedded":       "the board's files are embedded in the kandev binary; they change only with it",
		"asset_count":    len(assets),
		"asset_bytes":    total,
		"assets":         assets,
		"browser_errors": "not collected: the board does not report browser-side errors to the backend",
	})
}
