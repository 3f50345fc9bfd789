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

// ReadOperatorToken returns KANDEV_TOKEN or the data dir's token for CLI
// commands; it never creates one.
func ReadOperatorToken(dataDir, env string) (string, error) {
	if env != "" {
		return env, nil
	}
	b, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if err != nil {
		return "", fmt.Errorf("no operator token: set KANDEV_TOKEN or start `kandev serve` with --data-dir %s first", dataDir)
	}
	return strings.TrimSpace(string(b)), nil
}
