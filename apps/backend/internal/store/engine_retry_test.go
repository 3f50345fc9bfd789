package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestIsRetryable: the PostgreSQL errors a transaction is run again for,
// wrapped or not, and the ones it is not.
func TestIsRetryable(t *testing.T) {
	for code, want := range map[string]bool{"40001": true, "40P01": true, "53200": true, "23505": false, "53100": false, "42P01": false} {
		err := fmt.Errorf("create task: %w", &pgconn.PgError{Code: code})
		if got := isRetryable(err); got != want {
			t.Errorf("%s: got %v, want %v", code, got, want)
		}
	}
	if isRetryable(errors.New("database is locked")) {
		t.Error("a non-PostgreSQL error: got retryable")
	}
}
