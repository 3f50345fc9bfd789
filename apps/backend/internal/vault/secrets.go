package vault

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// maxLearned bounds the secrets read at start to teach the redactor.
const maxLearned = 10_000

// Secrets is a backend's named secrets: its key, its store and the
// redactor that learns every value.
type Secrets struct {
	key   *Key
	store kanban.SecretService
	red   *redact.Redactor
}

// Open checks that key opens the stored secrets and teaches red their
// values. A secret sealed with another key, or one that does not open, is
// an error naming the key ids, never a value: the backend must not start.
func Open(ctx context.Context, key *Key, store kanban.SecretService, red *redact.Redactor) (*Secrets, error) {
	ids, err := store.SecretKeyIDs(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id != key.ID() {
			return nil, fmt.Errorf("the stored secrets are encrypted with key %s, but the configured secrets key is %s: "+
				"start with the key they were sealed with (--secrets-key-file or KANDEV_SECRETS_KEY), or rotate with kandev secret rotate-key", id, key.ID())
		}
	}
	s := &Secrets{key: key, store: store, red: red}
	all, err := store.AllSecrets(ctx, maxLearned)
	if err != nil {
		return nil, err
	}
	for _, sec := range all {
		v, err := key.Open(sec.Name, sec.Sealed)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w (the key is not the one it was sealed with, or the row is damaged)", sec.Name, err)
		}
		red.Learn(v)
	}
	return s, nil
}

// Set seals and stores a secret, and teaches the redactor its value.
func (s *Secrets) Set(ctx context.Context, name, value string) (*kanban.SecretInfo, error) {
	if !utf8.ValidString(value) {
		return nil, kanban.FieldError("value", "must be UTF-8 text")
	}
	s.red.Learn(value)
	return s.store.PutSecret(ctx, kanban.SealedSecret{Name: name, KeyID: s.key.ID(), Sealed: s.key.Seal(name, value), Size: len(value)})
}

// List lists the secrets, masked.
func (s *Secrets) List(ctx context.Context, p kanban.Page) (*kanban.List[kanban.SecretInfo], error) {
	return s.store.ListSecrets(ctx, p)
}

// Delete deletes a secret (its value stays known to the redactor).
func (s *Secrets) Delete(ctx context.Context, name string) error {
	return s.store.DeleteSecret(ctx, name)
}

// Resolve returns v, or the value of the secret v refers to
// ("secret:NAME"): NOT_FOUND naming no value when it does not exist.
func (s *Secrets) Resolve(ctx context.Context, v string) (string, error) {
	name, ok := kanban.SecretRef(v)
	if !ok {
		return v, nil
	}
	sec, err := s.store.GetSecret(ctx, name)
	if err != nil {
		return "", err
	}
	plain, err := s.key.Open(sec.Name, sec.Sealed)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	s.red.Learn(plain) // set on another backend: learnt here on first use
	return plain, nil
}

// Values returns every secret's value (for the diagnostic bundles'
// redaction), at most maxLearned.
func (s *Secrets) Values(ctx context.Context) ([]string, error) {
	all, err := s.store.AllSecrets(ctx, maxLearned)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, sec := range all {
		v, err := s.key.Open(sec.Name, sec.Sealed)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", sec.Name, err)
		}
		out = append(out, v)
	}
	s.red.Learn(out...)
	return out, nil
}

// Rekey re-encrypts every secret from old to next in one transaction:
// all or none. A secret old does not open stops it, changing nothing.
func Rekey(ctx context.Context, store kanban.SecretService, old, next *Key) (int, error) {
	return store.RekeySecrets(ctx, func(sec kanban.SealedSecret) (kanban.SealedSecret, error) {
		v, err := old.Open(sec.Name, sec.Sealed)
		if err != nil {
			return sec, fmt.Errorf("secret %s: %w (is --old-key the key it was sealed with?)", sec.Name, err)
		}
		sec.KeyID, sec.Sealed = next.ID(), next.Seal(sec.Name, v)
		return sec, nil
	})
}
