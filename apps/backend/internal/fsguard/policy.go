// Package fsguard owns Kandev's filesystem policy: which local directories
// may be registered and used as repositories and folders (inside the
// operator's source roots, never touching a path Kandev protects: its data
// directory, the operator token, the database, the system directories, the
// home directory's credential stores), which of Kandev's own directories
// under the data dir a task may work in, and how a tool reads a file of a
// task's workspace (confined to it, bounded in bytes and time, never
// through a link, never a FIFO, socket, device or protected file).
//
// Every error a caller can see is a *kanban.Error whose text names the
// rule, never the path it was given. The package imports only the
// standard library and internal/kanban: never the store, the action
// layer, the runtime or a transport.
package fsguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// systemDirs are directories no source root and no source may be, contain
// or lie inside ("/" only by equality: everything lies inside it). The
// /lib* directories present on the machine are added at start.
var systemDirs = []string{"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
	"/proc", "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/log", "/var/run", "/var/spool",
	"/var/cache", "/var/mail", "/var/db", "/var/backups", "/var/lock", "/snap",
	"/System", "/Library", "/private/etc", "/private/var/db", "/private/var/log", "/private/var/run"}

// homeStores are the credential stores of the home directory, relative to
// it: no source may be, contain or lie inside one.
var homeStores = []string{".ssh", ".gnupg", ".aws", ".config", ".kube", ".docker", ".netrc",
	".git-credentials", ".npmrc", ".pypirc", ".claude", ".claude.json", ".codex", ".gemini",
	filepath.Join(".cache", "kandev")}

// Config is what a Policy is built from.
type Config struct {
	// Roots are the operator's source roots: absolute, existing
	// directories. Empty: no local path can be registered or used.
	Roots []string
	// DataDir is the backend's data directory (it must exist). Empty: the
	// policy knows no Kandev directory (KandevDir refuses every one).
	DataDir string
	// Files are files no tool may read whatever name they are reached by:
	// the operator token, its hash, the database. They need not exist yet.
	// Every regular file directly in DataDir at start is pinned too.
	Files []string
	// Protected are further paths no source may touch (the registry of
	// running backends).
	Protected []string
	// Home is the home directory whose credential stores are protected
	// (default: the current user's).
	Home string
}

// Policy is one backend's filesystem policy, read-only once built except
// for the secret files pinned while they exist (Pin): its methods are safe
// for concurrent use. The zero value has no root and no
// data dir: it refuses every local path and every Kandev directory.
type Policy struct {
	roots     []string // canonical
	system    []string // systemDirs and the machine's /lib* directories
	dataDir   string   // canonical; "" when unknown
	protected []string // cleaned absolute paths, as given and canonical
	files     []string // Config.Files, absolute
	// ids pins the protected files' identities at start (read-only after
	// New).
	ids []os.FileInfo
	// pinned are files protected while they exist (Pin, Unpin): the
	// session token files. Nil in the zero value (nothing pinned).
	pinned *pinnedFiles
}

// pinnedFiles are the identities of files pinned after start, by path.
type pinnedFiles struct {
	mu  sync.Mutex
	ids map[string]os.FileInfo
}

// New validates cfg and builds its policy. Its errors are for the
// operator starting the backend: they name the offending root.
func New(cfg Config) (*Policy, error) {
	p := &Policy{pinned: &pinnedFiles{ids: map[string]os.FileInfo{}}}
	if cfg.DataDir != "" {
		real, err := canonicalDir(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		p.dataDir = real
	}
	p.system = slices.Clone(systemDirs)
	if libs, err := filepath.Glob("/lib*"); err == nil {
		p.system = append(p.system, libs...)
	}
	p.protect(p.system...)
	home := cfg.Home
	if home == "" {
		home, _ = os.UserHomeDir() // no home: no home stores to protect
	}
	if filepath.IsAbs(home) {
		for _, s := range homeStores {
			p.protect(filepath.Join(home, s))
		}
	}
	if p.dataDir != "" {
		p.protect(cfg.DataDir, p.dataDir)
	}
	for _, f := range cfg.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("protected file: %w", err)
		}
		p.files = append(p.files, abs)
		p.protect(abs)
	}
	for _, x := range cfg.Protected {
		if x != "" {
			p.protect(x)
		}
	}
	for _, r := range cfg.Roots {
		real, err := p.checkRoot(r)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(p.roots, real) {
			p.roots = append(p.roots, real)
		}
	}
	p.recordFiles()
	return p, nil
}

// protect adds paths (and their canonical forms, when they exist) to the
// protected set.
func (p *Policy) protect(paths ...string) {
	for _, x := range paths {
		abs, err := filepath.Abs(x)
		if err != nil {
			continue
		}
		for _, v := range []string{abs, canonicalOrSelf(abs)} {
			if !slices.Contains(p.protected, v) {
				p.protected = append(p.protected, v)
			}
		}
	}
}

// checkRoot validates one source root and returns its canonical path.
func (p *Policy) checkRoot(r string) (string, error) {
	if !filepath.IsAbs(r) {
		return "", fmt.Errorf("source root %q: must be an absolute path", r)
	}
	real, err := canonicalDir(r)
	if err != nil {
		return "", fmt.Errorf("source root %q: %w", r, err)
	}
	for _, sys := range p.system {
		for _, form := range []string{r, real} {
			if overlaps(filepath.Clean(form), sys) || overlaps(filepath.Clean(form), canonicalOrSelf(sys)) {
				return "", fmt.Errorf("source root %q: is, contains or lies inside the system directory %s", r, sys)
			}
		}
	}
	for _, prot := range p.protected {
		if prot != "/" && (real == prot || within(real, prot)) {
			return "", fmt.Errorf("source root %q: lies inside %s, which Kandev protects", r, prot)
		}
	}
	return real, nil
}

// canonicalDir returns the canonical form of an existing directory.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", errors.New("does not exist or cannot be resolved")
	}
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return "", errors.New("is not a directory")
	}
	return real, nil
}

// canonicalOrSelf is path with its symlinks resolved, or path itself when
// it does not exist (yet).
func canonicalOrSelf(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	// A missing leaf under an existing directory: resolve the directory.
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// within reports whether child lies strictly inside parent (both clean
// and absolute).
func within(child, parent string) bool {
	if parent == string(filepath.Separator) {
		return child != parent && strings.HasPrefix(child, parent)
	}
	return strings.HasPrefix(child, parent+string(filepath.Separator))
}

// overlaps reports whether path is prot, lies inside it or contains it;
// "/" overlaps only itself.
func overlaps(path, prot string) bool {
	if path == prot || within(prot, path) {
		return true
	}
	return prot != string(filepath.Separator) && within(path, prot)
}

// DefaultRoots are the source roots when the operator sets none: the home
// directory, when it is set, exists and is not a system directory; else
// none.
func DefaultRoots() []string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return nil
	}
	real, err := canonicalDir(home)
	if err != nil {
		return nil
	}
	for _, sys := range systemDirs {
		if overlaps(real, sys) || overlaps(real, canonicalOrSelf(sys)) {
			return nil
		}
	}
	return []string{home}
}

// ParseRoots splits a --source-roots value (os.PathListSeparator between
// directories); empty entries are dropped.
func ParseRoots(s string) []string {
	var out []string
	for _, r := range filepath.SplitList(s) {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// Roots returns the canonical source roots.
func (p *Policy) Roots() []string { return slices.Clone(p.roots) }

// DataDir returns the canonical data dir ("" when unknown).
func (p *Policy) DataDir() string { return p.dataDir }

// recordFiles pins the identity of the protected files and of every
// regular file directly in the data dir as they are at start, so that one
// moved or linked elsewhere later is still known.
func (p *Policy) recordFiles() {
	paths := slices.Clone(p.files)
	if p.dataDir != "" {
		if list, err := os.ReadDir(p.dataDir); err == nil {
			for _, e := range list {
				if e.Type().IsRegular() {
					paths = append(paths, filepath.Join(p.dataDir, e.Name()))
				}
			}
		}
	}
	p.ids = identities(paths)
}

// identities returns the identities of the regular files among paths.
func identities(paths []string) []os.FileInfo {
	var ids []os.FileInfo
	for _, f := range paths {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			ids = append(ids, st)
		}
	}
	return ids
}

// isProtectedFile reports whether st is a protected file: one pinned at
// start (wherever it is now), or what Config.Files name now (a file
// written again since start).
func (p *Policy) isProtectedFile(st os.FileInfo) bool {
	same := func(o os.FileInfo) bool { return os.SameFile(o, st) }
	return slices.ContainsFunc(p.ids, same) || slices.ContainsFunc(identities(p.files), same) || p.pinned.has(st)
}

// Pin protects the file at path (a secret the backend wrote after start,
// a session's token file) until Unpin: no tool reads it, whatever name it
// is reached by, moved or linked. It reports whether the file was pinned.
func (p *Policy) Pin(path string) bool {
	if p.pinned == nil {
		return false
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	p.pinned.mu.Lock()
	defer p.pinned.mu.Unlock()
	p.pinned.ids[path] = st
	return true
}

// Unpin forgets the file pinned at path (once the file is removed).
func (p *Policy) Unpin(path string) {
	if p.pinned == nil {
		return
	}
	p.pinned.mu.Lock()
	defer p.pinned.mu.Unlock()
	delete(p.pinned.ids, path)
}

func (f *pinnedFiles) has(st os.FileInfo) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.ids {
		if os.SameFile(o, st) {
			return true
		}
	}
	return false
}
