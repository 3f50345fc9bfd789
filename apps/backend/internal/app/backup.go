package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// The operator's backup, restore and version commands. They work on the
// SQLite database of a data dir (a backup also while a backend serves
// from it); PostgreSQL is backed up with its own tools.

// pgDumpAdvice is what backup and restore tell an operator of a
// PostgreSQL database (docs/public/operations.md has the same commands).
const pgDumpAdvice = "kandev backup and restore work on the SQLite database of a data dir; back up PostgreSQL with its own tools:\n" +
	"  pg_dump --format=custom --file=kandev.dump \"$KANDEV_DATABASE_URL\"\n" +
	"and restore into a new, empty database with:\n" +
	"  pg_restore --no-owner --dbname=postgres://USER:PASSWORD@HOST/NEWDB kandev.dump"

// errPostgresBackup refuses kandev backup|restore on PostgreSQL.
var errPostgresBackup = errors.New(pgDumpAdvice)

// databaseFlag adds --database (env KANDEV_DATABASE_URL).
func databaseFlag(fs *flag.FlagSet) *string {
	return fs.String("database", os.Getenv("KANDEV_DATABASE_URL"), "postgres://… of a shared database (env KANDEV_DATABASE_URL; default: SQLite in the data dir)")
}

func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("backup", stderr)
	out := fs.String("out", "", "the backup file to write (required; must not exist)")
	database := databaseFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *database != "" {
		return errPostgresBackup
	}
	if *out == "" {
		return errors.New("backup: --out is required")
	}
	info, err := store.BackupSQLite(ctx, filepath.Join(*dataDir, store.DatabaseFile), *out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "backup %s: %d bytes, schema version %d, integrity ok\n", info.Path, info.Bytes, info.SchemaVersion)
	return err
}

func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("restore", stderr)
	from := fs.String("from", "", "the backup file to restore (required; see kandev backup)")
	database := databaseFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *database != "" {
		return errPostgresBackup
	}
	if *from == "" {
		return errors.New("restore: --from is required")
	}
	info, err := store.RestoreSQLite(ctx, *from, *dataDir)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "restored %s: %d bytes, schema version %d, integrity ok\n", info.Path, info.Bytes, info.SchemaVersion)
	return err
}

// versionCmd prints the binary's version and schema version and, when
// there is one, the schema version of the database it would serve.
func versionCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("version", stderr)
	database := databaseFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	latest := store.LatestVersion()
	_, _ = fmt.Fprintf(stdout, "kandev %s\nschema version %d (this binary)\n", toolserver.Version, latest)
	var v int
	var where string
	if *database != "" {
		if !store.IsPostgresURL(*database) {
			return errors.New("version: --database must be a postgres:// URL")
		}
		where = store.RedactURL(*database)
		var err error
		if v, err = store.PostgresSchemaVersion(ctx, *database); err != nil {
			return fmt.Errorf("version: database: %w", err)
		}
	} else {
		where = filepath.Join(*dataDir, store.DatabaseFile)
		var exists bool
		var err error
		if v, exists, err = store.SQLiteSchemaVersion(ctx, where); err != nil {
			return fmt.Errorf("version: database: %w", err)
		}
		if !exists {
			_, err = fmt.Fprintf(stdout, "database: none at %s yet\n", where)
			return err
		}
	}
	note := ""
	switch {
	case v > latest:
		note = " — newer than this binary: this binary refuses to serve it"
	case v < latest:
		note = " — older: serve (or kandev db migrate) applies the newer migrations"
	}
	_, err := fmt.Fprintf(stdout, "database schema version %d (%s)%s\n", v, where, note)
	return err
}
