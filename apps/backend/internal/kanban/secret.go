package kanban

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// Named secrets: values (forge tokens, Apprise URLs, SSH keys, agent API
// keys) stored encrypted and referred to by name as "secret:NAME" where a
// configuration takes a credential. No API returns a value: lists show a
// mask.

// Bounds of a secret.
const (
	MaxSecretNameLen  = 64
	MaxNamedSecretLen = 16 << 10 // a named secret's value: an SSH private key fits
	// SecretPrefix starts a reference to a secret ("secret:NAME").
	SecretPrefix = "secret:"
	// SecretMask is what lists show in place of a value.
	SecretMask = "********"
)

// SecretNamePattern is the form of a secret's name.
const SecretNamePattern = `^[A-Za-z][A-Za-z0-9_.-]{0,63}$` //nolint:gosec // G101: a name pattern, no credential

var secretNameRe = regexp.MustCompile(SecretNamePattern)

// SecretInfo is what may be shown of a secret: never its value.
type SecretInfo struct {
	Name      string    `json:"name"`
	Masked    string    `json:"masked"`
	Size      int       `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SealedSecret is a secret as stored: its name, the id of the key that
// sealed it and the sealed value.
type SealedSecret struct {
	Name, KeyID, Sealed string
	Size                int
}

// SecretRef returns the secret name v refers to ("secret:NAME"), if v is
// a well-formed reference.
func SecretRef(v string) (string, bool) {
	name, ok := strings.CutPrefix(v, SecretPrefix)
	return name, ok && secretNameRe.MatchString(name)
}

// SecretService stores sealed secrets.
type SecretService interface {
	// PutSecret creates or replaces a secret.
	PutSecret(ctx context.Context, s SealedSecret) (*SecretInfo, error)
	// GetSecret returns a sealed secret (NOT_FOUND when missing).
	GetSecret(ctx context.Context, name string) (*SealedSecret, error)
	// ListSecrets lists secrets by name.
	ListSecrets(ctx context.Context, p Page) (*List[SecretInfo], error)
	// DeleteSecret deletes a secret (NOT_FOUND when missing).
	DeleteSecret(ctx context.Context, name string) error
	// SecretKeyIDs returns the ids of the keys the secrets are sealed with.
	SecretKeyIDs(ctx context.Context) ([]string, error)
	// RekeySecrets rewrites every secret with reseal's result, in one
	// transaction: all or none.
	RekeySecrets(ctx context.Context, reseal func(SealedSecret) (SealedSecret, error)) (int, error)
	// AllSecrets returns every sealed secret (at most limit).
	AllSecrets(ctx context.Context, limit int) ([]SealedSecret, error)
}
