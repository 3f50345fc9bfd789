//go:build unix

package fsguard

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// leafFlags open the last component of a tool's path: read-only, never
// through a symlink, never waiting (a FIFO without a writer opens at once
// and is then refused by fstat), never becoming a controlling terminal.
const leafFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NOCTTY

// ReadFile reads at most limit bytes of the file that rel (relative to
// dir, a task's workspace) names, and reports its size. Every directory
// on the way is opened inside dir (os.Root: neither ".." nor a symlink
// leaves it), the file itself with O_NOFOLLOW|O_NONBLOCK; it must be a
// regular file with a single link that is not a protected file (the
// operator token, the database…, wherever they were moved). The read
// runs in the caller's goroutine, in chunks, under ReadWait and ctx: no
// goroutine outlives the call. Refusals are *kanban.Error on field.
func (p *Policy) ReadFile(ctx context.Context, dir Dir, rel, field string, limit int64) (*File, error) {
	clean, err := relPath(rel, field)
	if err != nil {
		return nil, err
	}
	root, err := dir.OpenRoot()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	f, err := openLeaf(root, clean, field)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, kanban.FieldError(field, "cannot be read")
	}
	if err := p.checkLeaf(st, field); err != nil {
		return nil, err
	}
	head, err := readBounded(ctx, f, min(limit, st.Size()+1), limit, field)
	if err != nil {
		return nil, err
	}
	return &File{Head: head, Size: st.Size()}, nil
}

// openLeaf opens clean's directory inside root and then its last
// component with leafFlags.
func openLeaf(root *os.Root, clean, field string) (*os.File, error) {
	// O_DIRECTORY: a FIFO where a directory is expected fails at once
	// instead of blocking the open.
	parent, err := root.OpenFile(filepath.Dir(clean), os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, parentError(err, field)
	}
	defer func() { _ = parent.Close() }()
	rc, err := parent.SyscallConn()
	if err != nil {
		return nil, kanban.FieldError(field, "cannot be read")
	}
	base := filepath.Base(clean)
	fd, oerr := -1, error(nil)
	if err := rc.Control(func(pfd uintptr) {
		for {
			fd, oerr = syscall.Openat(int(pfd), base, leafFlags, 0)
			if !errors.Is(oerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return nil, kanban.FieldError(field, "cannot be read")
	}
	if oerr != nil {
		return nil, leafError(oerr, field)
	}
	return os.NewFile(uintptr(fd), base), nil
}

// parentError says why the directories of a path could not be opened.
func parentError(err error, field string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return kanban.Errorf(kanban.CodeNotFound, "%s: no such file in the task's workspace", field)
	case strings.Contains(err.Error(), "path escapes"): // os.Root's refusal of a way out
		return kanban.FieldError(field, "must stay inside the task's workspace")
	}
	return kanban.FieldError(field, "cannot be read")
}

// leafError says why the last component of a path could not be opened.
func leafError(err error, field string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return kanban.Errorf(kanban.CodeNotFound, "%s: no such file in the task's workspace", field)
	case errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK): // O_NOFOLLOW met a symlink
		return kanban.FieldError(field, "is a symbolic link; name a regular file of the task's workspace itself")
	case errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EOPNOTSUPP): // a socket
		return kanban.FieldError(field, "must name a regular file")
	}
	return kanban.FieldError(field, "cannot be read")
}

// checkLeaf refuses what an opened file must not be: anything but a
// regular file, a file with other hard links (one could be the token's),
// a protected file.
func (p *Policy) checkLeaf(st os.FileInfo, field string) error {
	if !st.Mode().IsRegular() {
		return kanban.FieldError(field, "must name a regular file")
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || uint64(sys.Nlink) != 1 { //nolint:unconvert // Nlink is uint16 on some systems
		return kanban.FieldError(field, "has other hard links; Kandev reads only a file with a single link")
	}
	if p.isProtectedFile(st) {
		return kanban.FieldError(field, "is a file Kandev protects")
	}
	return nil
}

// readBounded reads f from its start until EOF or limit bytes (capacity
// hint hint), checking ctx and ReadWait between chunks.
func readBounded(ctx context.Context, f *os.File, hint, limit int64, field string) ([]byte, error) {
	deadline := time.Now().Add(ReadWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	buf := make([]byte, 0, max(min(hint, limit), 1))
	for int64(len(buf)) < limit {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "%s: reading the file took longer than %s; retry", field, ReadWait)
		}
		if len(buf) == cap(buf) { // the file grew past its size: room for one more chunk
			buf = slices.Grow(buf, int(min(readChunk, limit-int64(len(buf)))))
		}
		n := int(min(readChunk, limit-int64(len(buf)), int64(cap(buf)-len(buf))))
		m, err := f.Read(buf[len(buf) : len(buf)+n])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, kanban.FieldError(field, "cannot be read")
		}
	}
	return buf, nil
}
