// Package vault owns the encryption of named secrets at rest: AES-256-GCM
// with a 256-bit key the server reads from a key file or an environment
// variable (never from the database), each value sealed with a fresh
// random nonce and bound to its secret's name (the name is the
// additional data, so a sealed value moved to another name does not
// open). A key is known by its id, a short hash of it, stored beside each
// sealed value: a backend started with another key says so at start
// instead of failing later or serving garbage.
//
// Secrets is the named secrets of a backend over its store: it seals
// before storing, opens only to inject a value where it is needed, and
// teaches every value it sees to the backend's redactor.
//
// It imports kanban, redact and the standard library.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the key's length in bytes (AES-256).
const KeySize = 32

// version is the first byte of every sealed value (its format).
const version = 1

// ErrBadKey is a key that is not 32 bytes in hex or base64.
var ErrBadKey = errors.New("a secrets key is 32 bytes written as 64 hex digits or 44 base64 characters")

// Key is an AES-256 key and its id.
type Key struct {
	aead cipher.AEAD
	id   string
}

// ParseKey reads a key written as 64 hex digits or standard base64
// (surrounding white space ignored).
func ParseKey(text string) (*Key, error) {
	text = strings.TrimSpace(text)
	raw, err := hex.DecodeString(text)
	if err != nil || len(raw) != KeySize {
		raw, err = base64.StdEncoding.DecodeString(text)
	}
	if err != nil || len(raw) != KeySize {
		return nil, ErrBadKey
	}
	return newKey(raw)
}

func newKey(raw []byte) (*Key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	sum := sha256.Sum256(append([]byte("kandev secrets key id\x00"), raw...))
	return &Key{aead: aead, id: hex.EncodeToString(sum[:6])}, nil
}

// GenerateKey returns a new random key as 64 hex digits.
func GenerateKey() string {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(raw)
}

// ReadKeyFile reads the key in path, which must not be readable by
// others (mode 0600 or stricter).
func ReadKeyFile(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secrets key file %s is readable by others (mode %04o); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path) //nolint:gosec // the operator's configured key file
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	return k, nil
}

// ID is the key's id: a short hash, safe to store and show.
func (k *Key) ID() string { return k.id }

// Seal encrypts value for the secret name: version, nonce and ciphertext,
// base64-encoded.
func (k *Key) Seal(name, value string) string {
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	out := append([]byte{version}, nonce...)
	out = k.aead.Seal(out, nonce, []byte(value), []byte(name))
	return base64.StdEncoding.EncodeToString(out)
}

// ErrOpen is a sealed value this key cannot open (another key, another
// name, or corrupted).
var ErrOpen = errors.New("the secret cannot be decrypted with this key")

// Open decrypts a value Seal sealed for name.
func (k *Key) Open(name, sealed string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	n := k.aead.NonceSize()
	if err != nil || len(raw) < 1+n || raw[0] != version {
		return "", ErrOpen
	}
	plain, err := k.aead.Open(nil, raw[1:1+n], raw[1+n:], []byte(name))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}
