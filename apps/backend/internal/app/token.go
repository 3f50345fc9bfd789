package app

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is the operator token's file name in the data dir: the CLI's
// copy of the token. TokenHashFile is what the backend itself keeps: the
// token's SHA-256, hex.
const (
	TokenFile     = "token"
	TokenHashFile = "token.sha256"
)

// credential is the operator credential a backend checks: the token's
// SHA-256 and, when it was read at this start, the token itself (kept in
// memory only, so that text shown of agents can be redacted of it).
type credential struct {
	hash  [sha256.Size]byte
	clear string
}

// matches reports, in constant time, whether tok is the operator token.
func (c credential) matches(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	return tok != "" && subtle.ConstantTimeCompare(h[:], c.hash[:]) == 1
}

// operatorToken returns the operator credential: KANDEV_TOKEN when env is
// set; else the data dir's token file, whose hash it records in the
// TokenHashFile (a changed token file replaces the hash: that is how the
// token is rotated); else, when the operator removed the token file, the
// recorded hash alone; else, on first start, a new token (0600, 32 random
// bytes hex) and its hash.
func operatorToken(dataDir, env string) (credential, error) {
	if env != "" {
		return credential{hash: sha256.Sum256([]byte(env)), clear: env}, nil
	}
	path, hashPath := filepath.Join(dataDir, TokenFile), filepath.Join(dataDir, TokenHashFile)
	tok, err := readTokenFile(path)
	switch {
	case err == nil:
		c := credential{hash: sha256.Sum256([]byte(tok)), clear: tok}
		return c, recordHash(hashPath, c.hash)
	case !errors.Is(err, fs.ErrNotExist):
		return credential{}, err
	}
	if h, herr := readHashFile(hashPath); herr == nil {
		return credential{hash: h}, nil
	} else if !errors.Is(herr, fs.ErrNotExist) {
		return credential{}, herr
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return credential{}, fmt.Errorf("generate operator token: %w", err)
	}
	tok = hex.EncodeToString(raw[:])
	c := credential{hash: sha256.Sum256([]byte(tok)), clear: tok}
	// The token first: a start that stops between the two files leaves a
	// token without its hash, which the next start records; a hash whose
	// token was never written would lock the operator out.
	if err := writeNewFile(path, []byte(tok+"\n")); err != nil {
		return credential{}, fmt.Errorf("write operator token: %w", err)
	}
	if err := recordHash(hashPath, c.hash); err != nil {
		return credential{}, err
	}
	return c, nil
}

// recordHash writes h to path unless path already holds it.
func recordHash(path string, h [sha256.Size]byte) error {
	if cur, err := readHashFile(path); err == nil && cur == h {
		return nil
	}
	if err := replaceFile(path, []byte(hex.EncodeToString(h[:])+"\n")); err != nil {
		return fmt.Errorf("record the operator token's hash: %w", err)
	}
	return nil
}

// readHashFile reads a TokenHashFile.
func readHashFile(path string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	b, err := os.ReadFile(path) //nolint:gosec // the data dir's own file
	if err != nil {
		return h, err
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != sha256.Size {
		return h, fmt.Errorf("%s does not hold a SHA-256 in hex: remove it and restore the token file, or set KANDEV_TOKEN", path)
	}
	copy(h[:], raw)
	return h, nil
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
	b, err := os.ReadFile(path) //nolint:gosec // the operator's own token file
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no operator token: %s does not exist (is %s the data dir of a backend that has started?): %w", path, filepath.Dir(path), fs.ErrNotExist)
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

// replaceFile writes data to path (0600) all or nothing, replacing what is
// there: a synced temporary file renamed into place.
func replaceFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
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
	return os.Rename(tmp, path)
}
