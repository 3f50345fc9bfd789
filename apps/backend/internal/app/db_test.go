package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// TestDBMigrateAndCopy drives `kandev db migrate` and `kandev db copy` as
// the CLI runs them: a solo board's data dir is copied into a migrated,
// empty PostgreSQL database, a second copy is refused, and bad locations
// get clear errors.
func TestDBMigrateAndCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.Database(t)
	var out bytes.Buffer
	if err := DBMigrate(ctx, &out, u); err != nil || !strings.Contains(out.String(), "applied 0001_init.sql") ||
		!strings.Contains(out.String(), "schema version") {
		t.Fatalf("first migrate: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := DBMigrate(ctx, &out, u); err != nil || !strings.Contains(out.String(), "(0 migrations applied now)") {
		t.Fatalf("second migrate: %v\n%s", err, out.String())
	}

	e := newEnv(t) // a solo board: seeded SQLite in its data dir, with a task
	task := e.newTask("Moved to PostgreSQL")
	e.close()
	out.Reset()
	if err := DBCopy(ctx, &out, "sqlite:"+e.cfg.DataDir, u); err != nil {
		t.Fatalf("copy: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "row counts verified") || !strings.Contains(out.String(), "tasks") {
		t.Fatalf("copy output:\n%s", out.String())
	}
	st, err := store.OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.GetTask(ctx, task.ID)
	_ = st.Close()
	if err != nil || got.Title != task.Title || !got.CreatedAt.Equal(task.CreatedAt) {
		t.Fatalf("copied task: got %+v, %v; want %+v", got, err, task)
	}

	for _, c := range []struct{ name, from, to, want string }{
		{"non-empty target", "sqlite:" + filepath.Join(e.cfg.DataDir, store.DatabaseFile), u, "not empty"},
		{"missing source", "sqlite:" + filepath.Join(t.TempDir(), "nothing"), u, "no SQLite database"},
		{"source not SQLite", u, u, "--from must be sqlite:PATH"},
		{"target not PostgreSQL", "sqlite:" + e.cfg.DataDir, "sqlite:elsewhere", "--to a postgres:// URL"},
	} {
		if err := DBCopy(ctx, &bytes.Buffer{}, c.from, c.to); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if err := DBMigrate(ctx, &bytes.Buffer{}, "mysql://x"); err == nil || !strings.Contains(err.Error(), "postgres://… or sqlite:PATH") {
		t.Errorf("unknown scheme: got %v, want the accepted forms", err)
	}
	bad := "postgres://kandev:s3cret-pw@/nodb?host=" + t.TempDir() + "&connect_timeout=2"
	if err := DBMigrate(ctx, &bytes.Buffer{}, bad); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("unreachable database: got %v, want an error that does not repeat the password", err)
	}
	if _, err := openStore(ctx, Config{DataDir: t.TempDir(), Database: "sqlite:x"}); err == nil || !strings.Contains(err.Error(), "postgres:// URL") {
		t.Errorf("serve --database sqlite: got %v, want a refusal", err)
	}
}
