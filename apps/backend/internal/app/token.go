package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is the operator token's file name in the data dir.
const TokenFile = "token"

// operatorToken returns env when set, else the data dir's token file,
// creating it (0600, 32 random bytes hex) on first start.
func operatorToken(dataDir, env string) (string, error) {
	if env != "" {
		return env, nil
	}
	path := filepath.Join(dataDir, TokenFile)
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("operator token file %s is empty", path)
		}
		return tok, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read operator token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate operator token: %w", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := writeNewFile(path, []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("write operator token: %w", err)
	}
	return tok, nil
}

// TokenLookup says where an operator command looks for the operator token.
type TokenLookup struct {
	Env        string // KANDEV_TOKEN
	BackendURL string // the backend the command talks to
	DataDir    string // --data-dir or KANDEV_DATA_DIR, else the default ./.kandev
	DataDirSet bool   // DataDir was given explicitly
	Registry   string // the backend registry (DefaultRegistryDir); empty: none
}

// FindOperatorToken returns the operator token for a CLI command, looking
// in order at KANDEV_TOKEN, an explicitly given data dir, the record the
// backend running at BackendURL left in the registry, and the default
// data dir. It never creates a token. When none has one, the error says
// exactly what to do.
func FindOperatorToken(l TokenLookup) (string, error) {
	if l.Env != "" {
		return l.Env, nil
	}
	if l.DataDirSet {
		return readTokenFile(filepath.Join(l.DataDir, TokenFile))
	}
	if rec := lookupBackend(l.Registry, l.BackendURL); rec != nil {
		if rec.TokenFile == "" {
			return "", fmt.Errorf("the backend at %s takes its operator token from KANDEV_TOKEN: set KANDEV_TOKEN in this shell too", l.BackendURL)
		}
		return readTokenFile(rec.TokenFile)
	}
	if tok, err := readTokenFile(filepath.Join(l.DataDir, TokenFile)); err == nil {
		return tok, nil
	}
	return "", fmt.Errorf("no operator token for %s: no `kandev serve` of yours is running at that address, and %s holds no token. "+
		"Start the backend, or set KANDEV_TOKEN (`kandev token --data-dir DIR` prints it), or pass --data-dir DIR, where DIR is the running backend's data dir",
		l.BackendURL, filepath.Join(l.DataDir, TokenFile))
}

// ReadOperatorToken returns KANDEV_TOKEN or the data dir's token; it never
// creates one.
func ReadOperatorToken(dataDir, env string) (string, error) {
	return FindOperatorToken(TokenLookup{Env: env, DataDir: dataDir, DataDirSet: true})
}

func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no operator token: %s does not exist (is %s the data dir of a backend that has started?)", path, filepath.Dir(path))
	}
	if err != nil {
		return "", fmt.Errorf("read operator token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("operator token file %s is empty", path)
	}
	return tok, nil
}

// writeNewFile creates path (0600) holding data, all or nothing: the data
// goes to a temporary file in the same directory, is synced, and is then
// linked into place, which fails if path exists. A crash or a full disk
// part way leaves no path behind (an empty token file would refuse every
// later start), only a temporary file that is removed on failure.
func writeNewFile(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		// The link (or the failure) leaves the temporary name unused.
		_ = os.Remove(tmp)
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}
