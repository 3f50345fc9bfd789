package store

import (
	"errors"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// errStorageFull is what a write on a full filesystem (or a database at
// its size limit) answers: the write was rolled back, nothing changed,
// and the same call succeeds once space is freed.
var errStorageFull = kanban.Errorf(kanban.CodeUnavailable,
	"storage full: the write was not applied; free space on the data directory's filesystem and retry")

// errStorageIO is what a write that failed on an I/O error answers.
var errStorageIO = kanban.Errorf(kanban.CodeUnavailable, "storage error: the write was not applied; retry")

// storageError maps SQLite's "database or disk is full" and I/O errors to
// UNAVAILABLE (retryable, nothing applied); anything else is returned as
// it is.
func storageError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := kanban.AsError(err); ok {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL:
			return errStorageFull
		case sqlite3.SQLITE_IOERR:
			return errStorageIO
		}
	}
	if errors.Is(err, syscall.ENOSPC) {
		return errStorageFull
	}
	return err
}
