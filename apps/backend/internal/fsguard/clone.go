package fsguard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// CloneRoot is the directory of the clones Kandev keeps of repositories
// registered by remote URL only: <data dir>/repo-cache, inside the data
// dir and so protected like it (no source, no agent file read reaches
// it).
func (p *Policy) CloneRoot() string { return filepath.Join(p.dataDir, "repo-cache") }

// ClonePath is where the clone of the remote url is kept: one directory
// per URL (its SHA-256, so no caller text becomes a path).
func (p *Policy) ClonePath(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(p.CloneRoot(), hex.EncodeToString(sum[:12]))
}

// CloneDir checks the clone of url at use: it must be the directory
// ClonePath names, not a link, holding a .git directory (a clone Kandev
// completed). NOT_FOUND when there is none yet; FORBIDDEN otherwise.
func (p *Policy) CloneDir(url string) (Dir, error) {
	refused := kanban.Errorf(kanban.CodeForbidden, "the repository's clone under the data dir is not one Kandev made (a link or not a directory)")
	if p.dataDir == "" {
		return Dir{}, refused
	}
	if r, err := os.Lstat(p.CloneRoot()); err == nil && !r.IsDir() {
		return Dir{}, refused
	}
	path := p.ClonePath(url)
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Dir{}, kanban.Errorf(kanban.CodeNotFound, "the repository has not been cloned on this machine yet")
	}
	if err != nil || !st.IsDir() {
		return Dir{}, refused
	}
	if g, err := os.Lstat(filepath.Join(path, ".git")); err != nil || !g.IsDir() {
		return Dir{}, refused
	}
	return Dir{Path: path, info: st}, nil
}
