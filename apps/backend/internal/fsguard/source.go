package fsguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Why a local path is refused: safe texts that name the rule, never the
// path.
const (
	notAbsolute  = "must be an absolute path"
	invalidPath  = "is not a usable path (too long, or holding NUL or invalid UTF-8)"
	notDir       = "must be an existing directory on this machine"
	isProtected  = "is, contains or lies inside a path Kandev protects (its data directory, a system directory or a credential store)"
	outsideRoots = "is outside the source roots the operator allows (kandev serve --source-roots)"
	noRoots      = "cannot be used: the operator has set no source roots (kandev serve --source-roots)"
)

// Dir is a directory a check accepted: its canonical path and its identity
// when it was checked, so that opening it later can tell if it was
// replaced meanwhile.
type Dir struct {
	Path string
	info os.FileInfo
}

// check returns the canonical form of a local source path and its
// identity, or why it is refused.
func (p *Policy) check(path string) (string, os.FileInfo, string) {
	if len(path) > kanban.MaxPathLen || !utf8.ValidString(path) || strings.ContainsRune(path, 0) {
		return "", nil, invalidPath
	}
	if !filepath.IsAbs(path) {
		return "", nil, notAbsolute
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return "", nil, notDir
	}
	st, err := os.Lstat(real)
	if err != nil || !st.IsDir() {
		return "", nil, notDir
	}
	if slices.ContainsFunc(p.protected, func(prot string) bool { return overlaps(real, prot) }) {
		return "", nil, isProtected
	}
	if len(p.roots) == 0 {
		return "", nil, noRoots
	}
	if !slices.ContainsFunc(p.roots, func(r string) bool { return real == r || within(real, r) }) {
		return "", nil, outsideRoots
	}
	return real, st, ""
}

// CheckSource checks a local path being registered as a repository or
// folder (or the path of a file:// URL): absolute, an existing directory,
// inside a source root and disjoint from every protected path, once its
// symlinks are resolved. It returns the canonical path, which is what is
// stored. Refusals are VALIDATION_ERROR on field.
func (p *Policy) CheckSource(field, path string) (string, error) {
	real, _, why := p.check(path)
	if why != "" {
		return "", kanban.FieldError(field, "%s", why)
	}
	return real, nil
}

// SourceDir checks a registered local path at use (what the store holds
// may predate these rules): what names it (e.g. "the task's repository
// local_path") starts the error. A path that is not a directory on this
// machine is NOT_FOUND; any other refusal is FORBIDDEN.
func (p *Policy) SourceDir(what, path string) (Dir, error) {
	real, st, why := p.check(path)
	switch why {
	case "":
		return Dir{Path: real, info: st}, nil
	case notDir:
		return Dir{}, kanban.Errorf(kanban.CodeNotFound, "%s is not a directory on this machine", what)
	}
	return Dir{}, kanban.Errorf(kanban.CodeForbidden, "%s %s; the operator can register an allowed one", what, why)
}

// KandevDir checks a directory Kandev makes for a task under its data dir
// (tasks/<id>, worktrees/<short id>, and a repository's worktree in a task
// directory, worktrees/<short id>/<name>): once resolved it must be one of
// those, never a link to elsewhere. NOT_FOUND when it
// does not exist; FORBIDDEN otherwise.
func (p *Policy) KandevDir(path string) (Dir, error) {
	refused := kanban.Errorf(kanban.CodeForbidden, "the task's directory under the data dir is not one Kandev made (a link or not a directory)")
	if p.dataDir == "" || !filepath.IsAbs(path) {
		return Dir{}, refused
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Dir{}, kanban.Errorf(kanban.CodeNotFound, "the task's workspace directory does not exist on this machine yet")
	}
	if err != nil {
		return Dir{}, refused
	}
	if !p.kandevPlace(real, path) {
		return Dir{}, refused
	}
	st, err := os.Lstat(real)
	if err != nil || !st.IsDir() {
		return Dir{}, refused
	}
	return Dir{Path: real, info: st}, nil
}

// OpenRoot opens d as an os.Root, refusing it if the directory at its path
// is no longer the one that was checked (replaced by another or a link).
func (d Dir) OpenRoot() (*os.Root, error) {
	changed := kanban.Errorf(kanban.CodeConflict, "the task's workspace directory changed while it was opened; retry")
	if d.info == nil {
		return nil, changed
	}
	root, err := os.OpenRoot(d.Path)
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeNotFound, "the task's workspace directory cannot be opened")
	}
	st, err := root.Stat(".")
	if err != nil || !os.SameFile(st, d.info) {
		_ = root.Close()
		return nil, changed
	}
	return root, nil
}

// kandevPlace reports whether real (path resolved) is a directory Kandev
// makes for a task: directly in tasks/ or worktrees/, or one level below
// a task directory of worktrees/, reached by path without a link.
func (p *Policy) kandevPlace(real, path string) bool {
	if filepath.Base(real) != filepath.Base(path) {
		return false
	}
	parent := filepath.Dir(real)
	worktrees := filepath.Join(p.dataDir, "worktrees")
	switch {
	case parent == filepath.Join(p.dataDir, "tasks") || parent == worktrees:
		return true
	case filepath.Dir(parent) == worktrees:
		return filepath.Base(parent) == filepath.Base(filepath.Dir(path))
	}
	return false
}
