package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// openDatabase opens the store of a database location: a postgres:// URL,
// or sqlite:PATH (a data dir, or the database file itself). With
// mustExist a SQLite database that does not exist yet is refused instead
// of created.
func openDatabase(ctx context.Context, loc string, mustExist bool) (*store.Store, error) {
	if store.IsPostgresURL(loc) {
		return store.OpenPostgres(ctx, loc)
	}
	path, ok := strings.CutPrefix(loc, "sqlite:")
	if !ok || path == "" {
		return nil, errors.New("a database is postgres://… or sqlite:PATH (a data dir or its kandev.db)")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() { //nolint:gosec // the operator names the database (kandev db --database/--from)
		path = filepath.Join(path, store.DatabaseFile)
	}
	if _, err := os.Stat(path); err != nil && mustExist { //nolint:gosec // as above
		return nil, fmt.Errorf("no SQLite database at %s", path)
	}
	return store.OpenSQLiteFile(ctx, path)
}

// openStore opens the backend's database: PostgreSQL when cfg.Database is
// set, else SQLite in the data dir.
func openStore(ctx context.Context, cfg Config) (*store.Store, error) {
	if cfg.Database == "" {
		return store.Open(ctx, cfg.DataDir)
	}
	if !store.IsPostgresURL(cfg.Database) {
		return nil, errors.New("--database must be a postgres:// URL (without it the backend keeps SQLite in its data dir)")
	}
	return store.OpenPostgres(ctx, cfg.Database)
}

// DBMigrate applies the pending migrations of the database at loc (see
// openDatabase) and says which it applied.
func DBMigrate(ctx context.Context, w io.Writer, loc string) error {
	st, err := openDatabase(ctx, loc, false)
	if err != nil {
		return fmt.Errorf("db migrate: %w", err)
	}
	defer func() { _ = st.Close() }()
	for _, m := range st.Migrated() {
		_, _ = fmt.Fprintln(w, "applied", m)
	}
	_, err = fmt.Fprintf(w, "schema version %d (%d migrations applied now)\n", store.LatestVersion(), len(st.Migrated()))
	return err
}

// DBCopy copies the SQLite board at from into the empty PostgreSQL
// database at to, and prints each table's row count (verified equal on
// both sides). Both databases are first brought to this binary's schema.
func DBCopy(ctx context.Context, w io.Writer, from, to string) error {
	if store.IsPostgresURL(from) || !store.IsPostgresURL(to) {
		return errors.New("db copy: --from must be sqlite:PATH and --to a postgres:// URL")
	}
	src, err := openDatabase(ctx, from, true)
	if err != nil {
		return fmt.Errorf("db copy: source: %w", err)
	}
	defer func() { _ = src.Close() }()
	dst, err := store.OpenPostgres(ctx, to)
	if err != nil {
		return fmt.Errorf("db copy: target: %w", err)
	}
	defer func() { _ = dst.Close() }()
	tables, err := store.Copy(ctx, src, dst)
	if err != nil {
		return fmt.Errorf("db %w", err)
	}
	total := 0
	for _, t := range tables {
		total += t.Rows
		_, _ = fmt.Fprintf(w, "%-28s %8d rows\n", t.Name, t.Rows)
	}
	_, err = fmt.Fprintf(w, "copied %d rows in %d tables into %s; row counts verified\n", total, len(tables), store.RedactURL(to))
	return err
}
