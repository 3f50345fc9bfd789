package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotEmpty refuses a restore into a data dir that holds anything.
var ErrNotEmpty = errors.New("the data dir is not empty: restore only into a new or empty directory")

// RestoreSQLite restores the backup file from (see BackupSQLite) as the
// database of the data dir dataDir, which must not exist or be empty.
// It refuses, writing nothing, a non-empty data dir (ErrNotEmpty), a file
// that is not a kandev database (ErrNotKandevDatabase), one failing the
// integrity check, one with a -wal file beside it (a live database) and
// one whose schema is newer than this binary's (*NewerSchemaError). The
// copy is written under a temporary name, checked again and only then
// named kandev.db, so the data dir never holds a partial database.
func RestoreSQLite(ctx context.Context, from, dataDir string) (BackupInfo, error) {
	if fi, err := os.Stat(from); err != nil || !fi.Mode().IsRegular() {
		return BackupInfo{}, errors.New("restore: --from must name a backup file")
	}
	if fi, err := os.Stat(from + "-wal"); err == nil && fi.Size() > 0 {
		return BackupInfo{}, errors.New("restore: the file has a -wal file beside it (a live database): take a backup of it with kandev backup and restore that")
	}
	created, err := emptyDir(dataDir)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: %w", err)
	}
	v, err := VerifySQLite(ctx, from)
	if err == nil {
		err = checkNotNewer(v)
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: %w", err)
	}
	if created {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return BackupInfo{}, fmt.Errorf("restore: %w", err)
		}
	}
	info, err := copyIn(ctx, from, dataDir)
	if err != nil {
		if created {
			_ = os.Remove(dataDir)
		}
		return BackupInfo{}, fmt.Errorf("restore: %w", err)
	}
	return info, nil
}

// emptyDir reports whether dir must be created (it does not exist), and
// refuses one that is not an empty directory.
func emptyDir(dir string) (create bool, err error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, ErrNotEmpty
	}
	d, err := os.Open(dir) //nolint:gosec // the operator names the data dir
	if err != nil {
		return false, err
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(1)
	if len(names) > 0 {
		return false, ErrNotEmpty
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return false, nil
}

// copyIn copies from into dataDir's kandev.db through a checked
// temporary file.
func copyIn(ctx context.Context, from, dataDir string) (BackupInfo, error) {
	tmp, err := os.CreateTemp(dataDir, ".kandev.db.restore-*")
	if err != nil {
		return BackupInfo{}, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	src, err := os.Open(from) //nolint:gosec // the operator names the backup file
	if err != nil {
		_ = tmp.Close()
		return BackupInfo{}, err
	}
	n, err := io.Copy(tmp, src)
	_ = src.Close()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BackupInfo{}, err
	}
	v, err := VerifySQLite(ctx, tmp.Name())
	if err == nil {
		err = checkNotNewer(v)
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("the copy: %w", err)
	}
	final := filepath.Join(dataDir, DatabaseFile)
	if err := placeFile(tmp.Name(), final); err != nil {
		return BackupInfo{}, err
	}
	return BackupInfo{Path: final, Bytes: n, SchemaVersion: v}, nil
}
