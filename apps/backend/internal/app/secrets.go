package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/vault"
)

// SecretsKeyFile is the data dir's secrets key, created on a first start
// that names no key (see secretsKey).
const SecretsKeyFile = "secrets.key"

// secretsKey is the key the named secrets are sealed with: the
// KANDEV_SECRETS_KEY text, else --secrets-key-file, else the data dir's
// secrets.key — created (0600) when it is missing and no secret is
// stored yet. A key that is missing when secrets exist, unreadable or
// malformed is an error: the backend does not start (it never falls back
// to another key or to plaintext).
func secretsKey(ctx context.Context, cfg Config, st kanban.SecretService) (*vault.Key, error) {
	sec := cfg.Security
	switch {
	case sec.SecretsKey != "":
		k, err := vault.ParseKey(sec.SecretsKey)
		if err != nil {
			return nil, fmt.Errorf("KANDEV_SECRETS_KEY: %w", err)
		}
		return k, nil
	case sec.SecretsKeyFile != "":
		return vault.ReadKeyFile(sec.SecretsKeyFile)
	}
	path := filepath.Join(cfg.DataDir, SecretsKeyFile)
	k, err := vault.ReadKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	ids, err := st.SecretKeyIDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		return nil, fmt.Errorf("the database holds secrets sealed with key %s, but %s is missing: restore it, or start with --secrets-key-file or KANDEV_SECRETS_KEY", ids[0], path)
	}
	text := vault.GenerateKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // the data dir's own key file
	if err != nil {
		return nil, fmt.Errorf("create the secrets key: %w", err)
	}
	if _, err := io.WriteString(f, text+"\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write the secrets key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write the secrets key: %w", err)
	}
	return vault.ParseKey(text)
}

// openSecrets opens the named secrets with the configured key (see
// secretsKey) and teaches the backend's redactor their values.
func (b *backend) openSecrets(ctx context.Context) error {
	key, err := secretsKey(ctx, b.cfg, b.store)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if b.secrets, err = vault.Open(ctx, key, b.store, b.red); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}

const secretUsage = "usage: kandev secret rotate-key --old-key-file F --new-key-file F [--data-dir DIR | --database URL]" //nolint:gosec // G101: a usage line, no credential

// secretCmd runs kandev secret rotate-key: every secret re-encrypted from
// the old key to the new one in one transaction (all or none), on the
// database itself, with the backends stopped (a running backend keeps the
// key it started with).
func secretCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate-key" {
		return errors.New(secretUsage)
	}
	fset, dataDir := newFlags("secret rotate-key", stderr)
	oldFile := fset.String("old-key-file", "", "the key the secrets are sealed with now (default DATA_DIR/"+SecretsKeyFile+")")
	newFile := fset.String("new-key-file", "", "the key to seal them with (required; 0600; make one with: openssl rand -hex 32)")
	database := fset.String("database", os.Getenv("KANDEV_DATABASE_URL"), "postgres://… (env KANDEV_DATABASE_URL; default: SQLite in the data dir)")
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	if *newFile == "" {
		return errors.New(secretUsage)
	}
	if *oldFile == "" {
		*oldFile = filepath.Join(*dataDir, SecretsKeyFile)
	}
	oldKey, err := vault.ReadKeyFile(*oldFile)
	if err != nil {
		return err
	}
	newKey, err := vault.ReadKeyFile(*newFile)
	if err != nil {
		return err
	}
	var st *store.Store
	if st, err = openStore(ctx, Config{DataDir: *dataDir, Database: *database}); err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	n, err := vault.Rekey(ctx, st, oldKey, newKey)
	if err != nil {
		return fmt.Errorf("secret rotate-key: nothing changed: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "re-encrypted %d secrets from key %s to key %s; start the backends with the new key\n", n, oldKey.ID(), newKey.ID())
	return err
}
