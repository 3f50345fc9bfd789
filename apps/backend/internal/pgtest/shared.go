package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
)

// RequireEnv names the variable that, set to 1 (make test sets it), turns a cluster that cannot
// start on a machine that has PostgreSQL into a test failure. Without
// PostgreSQL installed the tests are still skipped, loudly.
const RequireEnv = "KANDEV_POSTGRES_TESTS"

// The cluster shared by the tests of one test binary, started on first use
// and stopped by Main.
var shared struct {
	once    sync.Once
	c       *Cluster
	err     error
	skipped atomic.Int32
}

// Shared returns the test binary's cluster, starting it on first use
// (with ctx's values: the cluster outlives the test that started it).
func Shared(ctx context.Context) (*Cluster, error) {
	shared.once.Do(func() { shared.c, shared.err = Start(context.WithoutCancel(ctx)) })
	return shared.c, shared.err
}

// Main runs a package's tests (call it from TestMain), then after (the
// package's own cleanups), stops the shared cluster and says loudly how
// many tests skipped their PostgreSQL half, and why.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop cluster:", err)
			code = max(code, 1)
		}
	}
	if n := shared.skipped.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "\n*** %d tests SKIPPED their PostgreSQL half: %v ***\n\n", n, shared.err)
	}
	os.Exit(code)
}

// Database returns the URL of a new empty database on the shared
// cluster, dropped when t ends. Without PostgreSQL it skips t loudly (or
// fails it when RequireEnv is set and PostgreSQL is installed).
func Database(t testing.TB) string {
	t.Helper()
	c := sharedOrSkip(t)
	ctx := context.WithoutCancel(t.Context()) // the drop runs after t's context ended
	name, u, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if err := c.DropDatabase(ctx, name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return u
}

// Schema returns the URL of a new empty schema (the URL's search_path) in
// the shared cluster's database "tests", dropped when t ends; it skips as
// Database does. For tests of one store: what backends coordinate
// through (notifications, advisory locks) is per database, so tests of
// several backends take a Database each.
func Schema(t testing.TB) string {
	t.Helper()
	c := sharedOrSkip(t)
	ctx := context.WithoutCancel(t.Context()) // the drop runs after t's context ended
	name, u, err := c.CreateSchema(ctx, "tests")
	if err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if err := c.DropSchema(ctx, "tests", name); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return u
}

// sharedOrSkip returns the shared cluster, or skips (fails) t without one.
func sharedOrSkip(t testing.TB) *Cluster {
	t.Helper()
	c, err := Shared(t.Context())
	if err != nil {
		if _, missing := BinDir(); missing == nil && os.Getenv(RequireEnv) == "1" {
			t.Fatalf("PostgreSQL is installed but a throwaway cluster did not start: %v", err)
		}
		shared.skipped.Add(1)
		t.Skipf("SKIPPED (PostgreSQL half): %v", err)
	}
	return c
}
