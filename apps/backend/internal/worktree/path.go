package worktree

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Path bounds.
const (
	maxPathLen = 4096
	// MaxFileBytes is the largest file whose content is read or diffed;
	// a larger file is reported (TooLarge), not sent.
	MaxFileBytes = 1 << 20
	// binarySniff is how much of a file is looked at for a NUL byte, as
	// git does (the first 8000 bytes).
	binarySniff = 8000
)

// checkPath refuses a path that is not a plain relative path inside the
// worktree: absolute, empty, "." or ".." parts, "//", a trailing "/",
// control characters, invalid UTF-8, or anything under ".git". Messages
// name the rule, never the path.
func checkPath(field, p string) error {
	switch {
	case p == "":
		return invalid(field, "is required")
	case len(p) > maxPathLen:
		return invalid(field, "is longer than 4096 bytes")
	case !utf8.ValidString(p):
		return invalid(field, "must be valid UTF-8")
	case p[0] == '/':
		return invalid(field, "must be relative to the worktree")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return invalid(field, "must not contain control characters")
		}
	}
	for _, part := range strings.Split(p, "/") {
		switch {
		case part == "":
			return invalid(field, `must not contain "//" or end with "/"`)
		case part == "." || part == "..":
			return invalid(field, `must not contain "." or ".." parts`)
		case strings.EqualFold(part, ".git"):
			return invalid(field, "must not be inside .git")
		}
	}
	return nil
}

// fileInfo is what is known about a path in the worktree without following
// a symlink anywhere.
type fileInfo struct {
	exists  bool
	regular bool
	symlink bool
	exec    bool // a regular file with an execute bit
	size    int64
}

// errEscape is returned for a path that leaves the worktree through a
// symlink (os.Root refuses it) or passes through a symlinked directory
// (git would not follow it either).
var errEscape = refuse(kanban.CodeValidation, "path: leads outside the worktree or through a symbolic link")

// stat describes p inside root: every parent must be a real directory
// (no symlinked directories, as git refuses them too); p itself may be a
// symlink, which is described, not followed.
func stat(root *os.Root, p string) (fileInfo, error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		st, err := root.Lstat(strings.Join(parts[:i], "/"))
		if errors.Is(err, fs.ErrNotExist) {
			return fileInfo{}, nil
		}
		if err != nil {
			return fileInfo{}, errEscape
		}
		if !st.IsDir() {
			if st.Mode()&fs.ModeSymlink != 0 {
				return fileInfo{}, errEscape
			}
			return fileInfo{}, nil // a file where a directory would be: p does not exist
		}
	}
	st, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fileInfo{}, nil
	}
	if err != nil {
		return fileInfo{}, errEscape
	}
	m := st.Mode()
	return fileInfo{exists: true, regular: m.IsRegular(), symlink: m&fs.ModeSymlink != 0, exec: m.IsRegular() && m&0o111 != 0, size: st.Size()}, nil
}

// content reads p's content as git stores it: a regular file's bytes, a
// symlink's target text. The caller checked the size (at most
// MaxFileBytes) with stat.
func content(root *os.Root, p string, fi fileInfo) ([]byte, error) {
	if fi.symlink {
		target, err := root.Readlink(p)
		if err != nil {
			return nil, errEscape
		}
		return []byte(target), nil
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, errEscape
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, refuse(kanban.CodeInternal, "a file of the worktree could not be read")
	}
	return b, nil
}

// isBinary reports what git would: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > binarySniff {
		b = b[:binarySniff]
	}
	return strings.IndexByte(string(b), 0) >= 0
}

// countLines counts lines as git's numstat does for a new file: the
// newlines, plus one for a last line without one.
func countLines(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
