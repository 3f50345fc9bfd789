package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// TestLeaseAgeOnlyAfterRenewal: a backend whose lease was never renewed
// has no lease age (a gauge of "since 1970" would fire KandevLeaseLost
// at every start); after Start it has one, and it is recent.
func TestLeaseAgeOnlyAfterRenewal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := NewMembers(MembersConfig{Store: st, ID: "a", Log: slog.New(slog.DiscardHandler)})
	if age, ok := m.LeaseAge(); ok {
		t.Fatalf("lease age before any renewal = %v, want none", age)
	}
	before := time.Now()
	if err := m.Start(ctx, "http://127.0.0.1:1", nil); err != nil {
		t.Fatal(err)
	}
	age, ok := m.LeaseAge()
	if !ok || age < 0 || age > time.Since(before) {
		t.Fatalf("lease age after Start = %v (ok %v), want within %v", age, ok, time.Since(before))
	}
	if m.RenewalFailures() != 0 {
		t.Fatalf("renewal failures = %d, want 0", m.RenewalFailures())
	}
}
