//go:build unix

package fsguard

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Entry is one entry of a directory of a task's workspace, as lstat sees
// it: a symbolic link is reported as one, never followed.
type Entry struct {
	Name string `json:"name"`
	// Kind is one of kanban.EntryKinds.
	Kind string `json:"kind"`
	// Size is a regular file's size in bytes (0 for the other kinds).
	Size int64 `json:"size"`
}

// Listing is one page of a directory's entries, sorted by name.
type Listing struct {
	Entries []Entry
	// More says entries after the page's last one remain.
	More bool
	// Partial says the directory holds more than kanban.MaxDirEntries
	// names: only that many were read.
	Partial bool
}

// ListDir lists the directory rel ("" or "." for the workspace itself) of
// dir, a task's workspace: the entries whose names sort after after, at
// most limit of them. Every directory on the way is opened inside dir
// (os.Root: neither ".." nor a symlink leaves it), the listed one without
// blocking (a FIFO where a directory is expected is refused at once).
// Refusals are *kanban.Error on field, and never name the path.
func (p *Policy) ListDir(ctx context.Context, dir Dir, rel, field, after string, limit int) (*Listing, error) {
	clean, err := relDir(rel, field)
	if err != nil {
		return nil, err
	}
	root, err := dir.OpenRoot()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	d, err := root.OpenFile(clean, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, parentError(err, field)
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(kanban.MaxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, kanban.FieldError(field, "cannot be read")
	}
	out := &Listing{Partial: len(names) > kanban.MaxDirEntries}
	names = names[:min(len(names), kanban.MaxDirEntries)]
	slices.Sort(names)
	i, _ := slices.BinarySearch(names, after)
	if i < len(names) && names[i] == after {
		i++
	}
	for _, name := range names[i:] {
		if len(out.Entries) == limit {
			out.More = true
			break
		}
		if ctx.Err() != nil {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "%s: listing the directory was cancelled; retry", field)
		}
		out.Entries = append(out.Entries, entryOf(root, filepath.Join(clean, name), name))
	}
	return out, nil
}

// entryOf describes one entry by lstat inside root (an entry that went
// away meanwhile is reported as "other", size 0).
func entryOf(root *os.Root, rel, name string) Entry {
	e := Entry{Name: name, Kind: kanban.EntryOther}
	st, err := root.Lstat(rel)
	if err != nil {
		return e
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		e.Kind, e.Size = kanban.EntryFile, st.Size()
	case m.IsDir():
		e.Kind = kanban.EntryDir
	case m&os.ModeSymlink != 0:
		e.Kind = kanban.EntrySymlink
	}
	return e
}
