package app

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// TestDoctorFailsMissingAgentAndNewerSchema runs the real kandev doctor
// on a data dir whose agents file adds a custom agent that is not
// installed and whose database is newer than the binary: both fail with
// their fixes, and it exits non-zero.
func TestDoctorFailsMissingAgentAndNewerSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future.sql', '')`, store.LatestVersion()+1)
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatalf("insert the future version: %v %v", err, cerr)
	}
	agents := `{"my-agent":{"display_name":"My Agent","command":"/nonexistent/my-acp","args":["serve"]}}`
	if err := os.WriteFile(filepath.Join(dir, "agents.json"), []byte(agents), 0o600); err != nil {
		t.Fatal(err)
	}
	out, ok := runDoctorBinary(t, "", "--data-dir", dir)
	if ok {
		t.Fatalf("kandev doctor exited 0:\n%s", out)
	}
	for _, want := range []string{
		fmt.Sprintf(`(?m)^FAIL\s+database\s+.*schema version %d, newer than this binary's %d\n\s+fix: run the kandev release`, store.LatestVersion()+1, store.LatestVersion()),
		`(?m)^FAIL\s+agent\s+my-agent is not installed: my-acp was not found on PATH\n\s+fix: `,
		`doctor: 2 check\(s\) failed`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("got:\n%s\nwant a match of %s", out, want)
		}
	}
}

// TestDoctorClockSkewOnPostgres runs kandev doctor on a migrated
// PostgreSQL database: with a backend whose heartbeat is the database's
// now the clock check is ok; with one whose heartbeat lies 10s ahead it
// warns naming that backend (a warning: the exit stays 0).
func TestDoctorClockSkewOnPostgres(t *testing.T) {
	t.Parallel()
	u := pgtest.Database(t)
	var buf bytes.Buffer
	if err := DBMigrate(context.Background(), &buf, u); err != nil {
		t.Fatalf("migrate: %v\n%s", err, buf.String())
	}
	cfg, err := store.ParsePostgresURL(u)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg.Conn)
	t.Cleanup(func() { _ = db.Close() })
	beat := func(id string, ahead time.Duration) {
		t.Helper()
		var now time.Time
		if err := db.QueryRow(`SELECT now()`).Scan(&now); err != nil {
			t.Fatal(err)
		}
		at := now.Add(ahead).UTC().Format("2006-01-02T15:04:05.000000Z")
		if _, err := db.Exec(`INSERT INTO cluster_backends (id, url, started_at, heartbeat_at) VALUES ($1, '', $2, $2)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, id, at); err != nil {
			t.Fatal(err)
		}
	}
	beat("b-steady", 0)
	out, ok := runDoctorBinary(t, "", "--data-dir", t.TempDir(), "--database", u)
	if !ok || !regexp.MustCompile(`(?m)^ok\s+clock\s+this machine and 1 backend\(s\) agree`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ok\s+database\s+.*schema version \d+ \(this binary's\)`).MatchString(out) {
		t.Fatalf("got:\n%s\nwant exit 0, the database and the clock ok", out)
	}
	beat("b-ahead", 10*time.Second)
	out, ok = runDoctorBinary(t, "", "--data-dir", t.TempDir(), "--database", u)
	if !ok || !regexp.MustCompile(`(?m)^warn\s+clock\s+backends' clocks ahead of the database's: b-ahead by [0-9.]+m?s\n\s+fix: run NTP`).MatchString(out) {
		t.Fatalf("got:\n%s\nwant exit 0 and a clock warning naming b-ahead", out)
	}
}
