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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write operator token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("write operator token: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write operator token: %w", err)
	}
	return tok, nil
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
