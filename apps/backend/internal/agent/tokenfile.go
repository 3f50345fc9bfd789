package agent

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
)

// TokenDir is the directory of the data dir that holds the token files of
// the sessions whose agents run: <data dir>/session-tokens/<session id>,
// each 0600 in a 0700 directory. A session's own MCP server (kandev mcp
// --token-file) reads its token there, so the token is on no command line
// and in no environment an agent passes on (an ACP agent may put its whole
// MCP configuration on the command line of a process it starts).
const TokenDir = "session-tokens"

// errTokenFile is what a launch that could not write its token file
// reports: it names neither the path nor the token.
var errTokenFile = errors.New("could not write the session's token file under the data dir")

// tokenFiles writes and removes the session token files of one runtime,
// each pinned in the filesystem policy while it exists (no Kandev tool
// reads it, moved or linked into a workspace either). dir is "" when the
// runtime knows no data dir: then no launch gets a token file and every
// one fails.
type tokenFiles struct {
	dir   string
	guard *fsguard.Policy
}

func newTokenFiles(guard *fsguard.Policy) tokenFiles {
	if guard == nil || guard.DataDir() == "" {
		return tokenFiles{}
	}
	return tokenFiles{dir: filepath.Join(guard.DataDir(), TokenDir), guard: guard}
}

// path is where the token file of session id lives ("" when the id could
// name anything but one file of the directory).
func (t tokenFiles) path(id string) string {
	if t.dir == "" || id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." || strings.HasPrefix(id, ".") {
		return ""
	}
	return filepath.Join(t.dir, id)
}

// ensureDir creates the directory (0700) or checks the one there: a real
// directory (never a link) that only its owner may enter.
func (t tokenFiles) ensureDir() error {
	if err := os.Mkdir(t.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, err := os.Lstat(t.dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("the session token directory is not a directory")
	}
	if st.Mode().Perm() != 0o700 {
		return os.Chmod(t.dir, 0o700) //nolint:gosec // a directory: its owner must enter it, no one else

	}
	return nil
}

// write writes session id's token file, replacing one a previous launch
// left, and returns its path. The file is created 0600 under a temporary
// name and renamed into place, so that it is never readable by others nor
// seen half written. The error is for the server log: it names neither
// the path nor the token.
func (t tokenFiles) write(id, token string) (string, error) {
	path, err := t.writeFile(id, token)
	return path, pathless(err)
}

func (t tokenFiles) writeFile(id, token string) (string, error) {
	path := t.path(id)
	if path == "" {
		return "", errors.New("no data dir, or a session id that names no file")
	}
	if err := t.ensureDir(); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(t.dir, ".tmp-*") // mode 0600
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.WriteString(token + "\n")
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if !t.guard.Pin(path) { // replaces a previous launch's pin of path
		_ = os.Remove(path)
		return "", errors.New("the token file could not be pinned in the filesystem policy")
	}
	return path, nil
}

// pathless is err without the path it names (for the server log: the
// token file's path is not logged either).
func pathless(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return errors.New(pe.Op + ": " + pe.Err.Error())
	case errors.As(err, &le):
		return errors.New(le.Op + ": " + le.Err.Error())
	}
	return err
}

// remove removes session id's token file (nothing when there is none).
func (t tokenFiles) remove(id string) error {
	path := t.path(id)
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return pathless(err)
	}
	t.guard.Unpin(path)
	return nil
}

// clear removes every file of the directory: at a runtime's start no
// session of this data dir has a live agent, so any file there is one a
// previous process left (its token is rotated at the next launch anyway).
func (t tokenFiles) clear() error {
	if t.dir == "" {
		return nil
	}
	st, err := os.Lstat(t.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return pathless(err)
	case !st.IsDir(): // a link or a file in its place: never follow it
		return pathless(os.Remove(t.dir))
	}
	list, err := os.ReadDir(t.dir)
	if err != nil {
		return pathless(err)
	}
	var errs []error
	for _, e := range list {
		if err := os.RemoveAll(filepath.Join(t.dir, e.Name())); err != nil {
			errs = append(errs, pathless(err))
		}
	}
	return errors.Join(errs...)
}

// removeToken removes the run's token file.
func (r *run) removeToken() {
	if err := r.m.tokens.remove(r.id); err != nil {
		r.m.log.ErrorContext(r.ctx, "remove the session's token file", "err", err)
	}
}
