package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// NewerSchemaError refuses a database whose schema version is newer than
// this binary knows: a newer kandev wrote it, and this one could
// misread it or break it. Nothing is written to such a database.
type NewerSchemaError struct {
	// Database is the database's schema version; Binary is this binary's.
	Database, Binary int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this binary's schema version %d: "+
		"run the kandev release that wrote it (or newer), or restore a backup taken before the upgrade", e.Database, e.Binary)
}

// checkNotNewer refuses version when it is newer than this binary's.
func checkNotNewer(version int) error {
	if latest := LatestVersion(); version > latest {
		return &NewerSchemaError{Database: version, Binary: latest}
	}
	return nil
}

// SQLiteSchemaVersion reads the schema version of the SQLite database
// file at path without writing anything: no journal mode change, no
// migration, and no -wal/-shm files created when none are there. exists
// is false (and version 0) when there is no file at path. A database
// without kandev's schema_migrations table is version 0.
func SQLiteSchemaVersion(ctx context.Context, path string) (version int, exists bool, err error) {
	fi, err := os.Stat(path) //nolint:gosec // G703: the operator names the data dir
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read schema version: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, true, errors.New("read schema version: the database path is not a regular file")
	}
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return 0, true, fmt.Errorf("read schema version: %w", err)
	}
	defer func() { _ = db.Close() }()
	version, _, err = schemaVersion(ctx, db)
	return version, true, err
}

// readOnlyDSN opens path for reading only. When a non-empty -wal file
// lies beside it (a backend has it open, or stopped without
// checkpointing) the reader must see the WAL, so it opens read-only
// through SQLite's locks (which use the -wal and -shm files already
// there); otherwise the main file holds every commit and is opened
// immutable, which creates no file at all.
func readOnlyDSN(path string) string {
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 { //nolint:gosec // G703: as above
		return "file:" + uriPath(path) + "?mode=ro&_pragma=busy_timeout(5000)"
	}
	return "file:" + uriPath(path) + "?mode=ro&immutable=1"
}

// uriPath escapes path for a file: URI, so that a data dir whose name
// holds ? or # cannot add query parameters (pragmas run as SQL).
func uriPath(path string) string { return (&url.URL{Path: path}).EscapedPath() }

// schemaVersion reads MAX(version) of schema_migrations; found is false
// when the table is missing.
func schemaVersion(ctx context.Context, q queryer) (version int, found bool, err error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("read schema version: %w", err)
	}
	if n == 0 {
		return 0, false, nil
	}
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return 0, true, fmt.Errorf("read schema version: %w", err)
	}
	return version, true, nil
}

// checkSQLiteNotNewer refuses the SQLite database at path when its schema
// is newer than this binary's, reading it before anything (journal mode,
// migrations) could write to it.
func checkSQLiteNotNewer(ctx context.Context, path string) error {
	v, exists, err := SQLiteSchemaVersion(ctx, path)
	if err != nil || !exists {
		return err
	}
	return checkNotNewer(v)
}

// PostgresSchemaVersion reads the schema version of the PostgreSQL
// database of rawURL in a read-only transaction (0 when it has no
// schema_migrations table yet).
func PostgresSchemaVersion(ctx context.Context, rawURL string) (int, error) {
	cfg, err := ParsePostgresURL(rawURL)
	if err != nil {
		return 0, err
	}
	db := openPGPool(cfg)
	defer func() { _ = db.Close() }()
	return pgSchemaVersion(ctx, db)
}

// pgSchemaVersion reads MAX(version) of schema_migrations (on the
// connection's search_path) in a read-only transaction.
func pgSchemaVersion(ctx context.Context, db *sql.DB) (version int, err error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var table sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass('schema_migrations')::text`).Scan(&table); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !table.Valid {
		return 0, nil
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return version, nil
}

// CheckNotNewer refuses (*NewerSchemaError) the database a backend is
// about to serve when its schema is newer than this binary's, reading it
// only: database is a postgres:// URL, or empty for the SQLite database
// of dataDir. It lets a backend refuse before it writes anything at all
// (its data dir's token, for one); an unreachable or unreadable database
// is left for the open that follows to report.
func CheckNotNewer(ctx context.Context, database, dataDir string) error {
	var v int
	var err error
	if database == "" {
		v, _, err = SQLiteSchemaVersion(ctx, filepath.Join(dataDir, DatabaseFile))
	} else if IsPostgresURL(database) {
		v, err = PostgresSchemaVersion(ctx, database)
	}
	if err != nil {
		return nil //nolint:nilerr // Open reports it, with its own context
	}
	return checkNotNewer(v)
}
