package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Backups of a SQLite database are taken with VACUUM INTO on a read-only
// connection of their own: the copy is one consistent snapshot (a read
// transaction, which WAL lets run beside the backend's writers), compact,
// and in rollback-journal mode, so a backup is one self-contained file.
// Every copy is checked (PRAGMA integrity_check, kandev's schema table)
// before it gets its final name, and names are never overwritten.

// BackupInfo describes a backup file.
type BackupInfo struct {
	Path          string
	Bytes         int64
	SchemaVersion int
}

// Errors callers branch on (the CLI's exit and the scheduler's log).
var (
	// ErrExists refuses a backup or restore target that already exists.
	ErrExists = errors.New("the target already exists; kandev never overwrites it")
	// ErrNotKandevDatabase refuses a file that is not a kandev SQLite database.
	ErrNotKandevDatabase = errors.New("not a kandev database")
)

// integrityLimit bounds the problems PRAGMA integrity_check reports.
const integrityLimit = 10

// BackupSQLite copies the SQLite database at src (kandev.db of a data
// dir, whether or not a backend is serving from it) into the new file
// out, checks the copy and returns its size and schema version. out must
// not exist (ErrExists) and its directory must; nothing is left at out
// when the backup fails.
func BackupSQLite(ctx context.Context, src, out string) (BackupInfo, error) {
	if _, err := os.Lstat(out); err == nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", ErrExists)
	}
	if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() {
		return BackupInfo{}, errors.New("backup: no SQLite database at the source (is the data dir right?)")
	}
	dir, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".kandev-backup-*.tmp")
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backup: create the copy in the output directory: %w", err)
	}
	tmpPath := tmp.Name()
	defer func() { _ = os.Remove(tmpPath) }()
	if err := tmp.Close(); err != nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	if err := vacuumInto(ctx, src, tmpPath); err != nil {
		return BackupInfo{}, err
	}
	v, err := VerifySQLite(ctx, tmpPath)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backup: the copy: %w", err)
	}
	if err := placeFile(tmpPath, out); err != nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("backup: %w", err)
	}
	return BackupInfo{Path: out, Bytes: fi.Size(), SchemaVersion: v}, nil
}

// vacuumInto writes a snapshot of src into the empty file dst.
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+uriPath(src)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("backup: open the source: %w", err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return fmt.Errorf("backup: VACUUM INTO: %w", err)
	}
	return nil
}

// placeFile makes the complete, checked file tmp durable and gives it the
// name final without replacing anything there (a hard link fails on an
// existing name, where a rename would replace it), then syncs the
// directory so the name survives a crash.
func placeFile(tmp, final string) error {
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, os.ErrExist) {
			return ErrExists
		}
		return err
	}
	d, err := os.Open(filepath.Dir(final))
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// VerifySQLite checks that the file at path is a kandev SQLite database
// (ErrNotKandevDatabase otherwise) that passes PRAGMA integrity_check,
// reading it only, and returns its schema version. It reads the file
// alone: a database with a -wal file beside it is a live one, to be
// copied with BackupSQLite first.
func VerifySQLite(ctx context.Context, path string) (int, error) {
	if err := checkMagic(path); err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&immutable=1")
	if err != nil {
		return 0, fmt.Errorf("verify: %w", err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	if err := integrityCheck(ctx, db); err != nil {
		return 0, err
	}
	v, found, err := schemaVersion(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("integrity check: %w", err)
	}
	var first string
	if found {
		err = db.QueryRowContext(ctx, `SELECT name FROM schema_migrations WHERE version = 1`).Scan(&first)
	}
	if !found || v < 1 || err != nil || first != "0001_init.sql" {
		return 0, fmt.Errorf("%w (its schema_migrations table is missing or foreign)", ErrNotKandevDatabase)
	}
	return v, nil
}

// checkMagic refuses a file that does not start with SQLite's header.
func checkMagic(path string) error {
	f, err := os.Open(path) //nolint:gosec // the operator names the file (backup, restore)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sqliteMagic) {
		return fmt.Errorf("%w (not a SQLite database file)", ErrNotKandevDatabase)
	}
	return nil
}

// integrityCheck runs PRAGMA integrity_check; anything but "ok" (or an
// error reading the file, such as a malformed page) is a failure.
func integrityCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, fmt.Sprintf(`PRAGMA integrity_check(%d)`, integrityLimit))
	if err != nil {
		return fmt.Errorf("integrity check failed: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("integrity check failed: %w", err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check failed: %w", err)
	}
	if len(problems) == 1 && problems[0] == "ok" {
		return nil
	}
	return fmt.Errorf("integrity check failed: %q", problems)
}
