package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Named secrets (secrets): sealed by package vault before they reach the
// store, which never sees a value.

func scanSecretInfo(r rowSource) (*kanban.SecretInfo, error) {
	var i kanban.SecretInfo
	var created, updated string
	if err := r.Scan(&i.Name, &i.Size, &created, &updated); err != nil {
		return nil, err
	}
	i.Masked, i.CreatedAt, i.UpdatedAt = kanban.SecretMask, parseTime(created), parseTime(updated)
	return &i, nil
}

// PutSecret creates or replaces a secret.
func (s *Store) PutSecret(ctx context.Context, sec kanban.SealedSecret) (*kanban.SecretInfo, error) {
	var out *kanban.SecretInfo
	now := fmtTime(kanban.Now())
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE secrets SET key_id = ?, sealed = ?, size = ?, updated_at = ? WHERE name = ?`,
			sec.KeyID, sec.Sealed, sec.Size, now, sec.Name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO secrets (name, key_id, sealed, size, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
				sec.Name, sec.KeyID, sec.Sealed, sec.Size, now, now); err != nil {
				return err
			}
		}
		out, err = scanSecretInfo(tx.QueryRowContext(ctx, `SELECT name, size, created_at, updated_at FROM secrets WHERE name = ?`, sec.Name))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("put secret: %w", err)
	}
	return out, nil
}

// GetSecret returns a sealed secret (NOT_FOUND when missing).
func (s *Store) GetSecret(ctx context.Context, name string) (*kanban.SealedSecret, error) {
	var sec kanban.SealedSecret
	err := s.stmts.QueryRowContext(ctx, `SELECT name, key_id, sealed, size FROM secrets WHERE name = ?`, name).
		Scan(&sec.Name, &sec.KeyID, &sec.Sealed, &sec.Size)
	if err != nil {
		return nil, notFound(err, "secret")
	}
	return &sec, nil
}

var secretListing = listing[kanban.SecretInfo]{what: "list secrets",
	selectFrom: `SELECT name, size, created_at, updated_at FROM secrets`, scan: scanSecretInfo, cols: []string{"name"},
	key: func(i kanban.SecretInfo) []any { return []any{i.Name} }}

// ListSecrets lists secrets by name, masked.
func (s *Store) ListSecrets(ctx context.Context, p kanban.Page) (*kanban.List[kanban.SecretInfo], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	return secretListing.page(ctx, s.stmts, p, "")
}

// DeleteSecret deletes a secret (NOT_FOUND when missing).
func (s *Store) DeleteSecret(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM secrets WHERE name = ?`, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return kanban.NotFound("secret")
		}
		return nil
	})
}

// SecretKeyIDs returns the distinct ids of the keys secrets are sealed with.
func (s *Store) SecretKeyIDs(ctx context.Context) ([]string, error) {
	scan := func(r rowSource) (*string, error) {
		var id string
		return &id, r.Scan(&id)
	}
	ids, err := scanAll(ctx, s.stmts, scan, `SELECT DISTINCT key_id FROM secrets ORDER BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("secret key ids: %w", err)
	}
	return ids, nil
}

// AllSecrets returns every sealed secret, at most limit, by name.
func (s *Store) AllSecrets(ctx context.Context, limit int) ([]kanban.SealedSecret, error) {
	out, err := scanAll(ctx, s.stmts, scanSealed, `SELECT name, key_id, sealed, size FROM secrets ORDER BY name LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	return out, nil
}

func scanSealed(r rowSource) (*kanban.SealedSecret, error) {
	var sec kanban.SealedSecret
	if err := r.Scan(&sec.Name, &sec.KeyID, &sec.Sealed, &sec.Size); err != nil {
		return nil, err
	}
	return &sec, nil
}

// RekeySecrets rewrites every secret with reseal's result in one
// transaction: an error from reseal leaves every secret as it was.
func (s *Store) RekeySecrets(ctx context.Context, reseal func(kanban.SealedSecret) (kanban.SealedSecret, error)) (int, error) {
	var n int
	err := s.tx(ctx, func(tx txn) error {
		n = 0
		all, err := scanAll(ctx, tx, scanSealed, `SELECT name, key_id, sealed, size FROM secrets ORDER BY name`)
		if err != nil {
			return err
		}
		for _, sec := range all {
			out, err := reseal(sec)
			if err != nil {
				return err
			}
			if out.Name != sec.Name {
				return errors.New("rekey: a secret's name changed")
			}
			if _, err := tx.ExecContext(ctx, `UPDATE secrets SET key_id = ?, sealed = ? WHERE name = ?`, out.KeyID, out.Sealed, sec.Name); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("rekey secrets: %w", err)
	}
	return n, err
}
