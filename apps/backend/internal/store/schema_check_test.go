package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestOpenNewerPostgresSchemaWritesNothing: on PostgreSQL a newer schema
// is refused before anything writes. The second open runs with
// default_transaction_read_only, so any write it tried (the migration
// table's CREATE, a migration) would fail with another error first.
func TestOpenNewerPostgresSchemaWritesNothing(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	s := must(OpenPostgres(t.Context(), u))(t)
	future := LatestVersion() + 1
	if _, err := s.DB().Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future.sql', '')`, future); err != nil {
		t.Fatalf("insert future version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	ro := u + sep + "default_transaction_read_only=on"
	s2, err := OpenPostgres(t.Context(), ro)
	if err == nil {
		_ = s2.Close()
		t.Fatal("open: got nil error, want the newer-schema refusal")
	}
	var ne *NewerSchemaError
	if !errors.As(err, &ne) || ne.Database != future || ne.Binary != LatestVersion() {
		t.Fatalf("open: got %v, want a NewerSchemaError %d > %d", err, future, LatestVersion())
	}
	if v, err := PostgresSchemaVersion(t.Context(), ro); err != nil || v != future {
		t.Fatalf("schema version: got %d (%v), want %d", v, err, future)
	}
}
