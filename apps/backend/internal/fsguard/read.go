package fsguard

import (
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ReadWait bounds one ReadFile, whatever the caller's context allows.
const ReadWait = 5 * time.Second

// readChunk is how much one read(2) of ReadFile asks for: the deadline is
// checked between chunks.
const readChunk = 32 << 10

// File is what ReadFile read of a regular file: its first bytes and its
// size.
type File struct {
	Head []byte
	Size int64
}

// relPath checks a workspace-relative path and returns it cleaned.
func relPath(rel, field string) (string, error) {
	if rel == "" || len(rel) > kanban.MaxPathLen || !utf8.ValidString(rel) || strings.ContainsRune(rel, 0) || filepath.IsAbs(rel) {
		return "", kanban.FieldError(field, "must be a path relative to the task's workspace")
	}
	clean := filepath.Clean(rel)
	switch {
	case clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)):
		return "", kanban.FieldError(field, "must stay inside the task's workspace")
	case clean == ".":
		return "", kanban.FieldError(field, "must name a regular file")
	}
	return clean, nil
}

// relDir checks a workspace-relative directory path ("" and "." name the
// workspace itself) and returns it cleaned.
func relDir(rel, field string) (string, error) {
	if rel == "" || (!filepath.IsAbs(rel) && filepath.Clean(rel) == ".") {
		return ".", nil
	}
	clean, err := relPath(rel, field)
	if err != nil {
		return "", err
	}
	return clean, nil
}
