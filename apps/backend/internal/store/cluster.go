package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// What backends sharing a database coordinate through, besides the event
// log (events.go): leases that say which backends are alive, the owner of
// each managed session (the backend whose runtime runs its agent), and
// advisory locks for work that must run on one backend at a time. On
// SQLite one process owns the database: it holds every lock, and the
// owner of a session from an earlier process is always gone.

// Heartbeat records that backend id (reachable at url) is alive now,
// starting its lease or renewing it.
func (s *Store) Heartbeat(ctx context.Context, id, url string, now time.Time) error {
	t := fmtTime(now)
	_, err := s.stmts.ExecContext(ctx, `INSERT INTO cluster_backends (id, url, started_at, heartbeat_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, url = excluded.url`, id, url, t, t)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// Deregister ends backend id's lease at once (a clean shutdown): the
// sessions it owned are free for others to take over.
func (s *Store) Deregister(ctx context.Context, id string) error {
	if _, err := s.stmts.ExecContext(ctx, `DELETE FROM cluster_backends WHERE id = ?`, id); err != nil {
		return fmt.Errorf("deregister: %w", err)
	}
	return nil
}

// Backend is a live backend's lease.
type Backend struct {
	ID          string
	URL         string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// LiveBackends lists the backends whose lease was renewed at or after
// since, oldest first (at most kanban.MaxLimit).
func (s *Store) LiveBackends(ctx context.Context, since time.Time) ([]Backend, error) {
	scan := func(r rowSource) (*Backend, error) {
		var b Backend
		var started, beat string
		if err := r.Scan(&b.ID, &b.URL, &started, &beat); err != nil {
			return nil, err
		}
		b.StartedAt, b.HeartbeatAt = parseTime(started), parseTime(beat)
		return &b, nil
	}
	out, err := scanAll(ctx, s.stmts, scan, `SELECT id, url, started_at, heartbeat_at FROM cluster_backends
		WHERE heartbeat_at >= ? ORDER BY started_at, id LIMIT ?`, fmtTime(since), kanban.MaxLimit)
	if err != nil {
		return nil, fmt.Errorf("live backends: %w", err)
	}
	return out, nil
}

// PruneBackends removes leases that ended before cutoff.
func (s *Store) PruneBackends(ctx context.Context, cutoff time.Time) error {
	if _, err := s.stmts.ExecContext(ctx, `DELETE FROM cluster_backends WHERE heartbeat_at < ?`, fmtTime(cutoff)); err != nil {
		return fmt.Errorf("prune backends: %w", err)
	}
	return nil
}

// ClaimOrphans makes backend id the owner of up to limit managed
// sessions that have not ended and whose owner is gone (no lease renewed
// at or after since, or none at all), oldest first, and returns them.
// Each orphan is claimed by exactly one backend: the claim is one
// transaction, serialisable against other backends' claims.
func (s *Store) ClaimOrphans(ctx context.Context, id string, since time.Time, limit int) ([]kanban.Session, error) {
	var out []kanban.Session
	err := s.tx(ctx, func(tx txn) error {
		ids, err := scanAll(ctx, tx, scanID, `SELECT id FROM task_sessions WHERE managed = 1 AND state NOT IN (?, ?, ?)
			AND owner_id <> ? AND owner_id NOT IN (SELECT id FROM cluster_backends WHERE heartbeat_at >= ?)
			ORDER BY created_at, id LIMIT ?`, string(kanban.SessionCompleted), string(kanban.SessionFailed),
			string(kanban.SessionCancelled), id, fmtTime(since), limit)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, sid := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE task_sessions SET owner_id = ? WHERE id = ?`, id, sid); err != nil {
				return err
			}
			sess, err := getSession(ctx, tx, sid)
			if err != nil {
				return err
			}
			out = append(out, *sess)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim orphaned sessions: %w", err)
	}
	return out, nil
}

func scanID(r rowSource) (*string, error) {
	var id string
	return &id, r.Scan(&id)
}

// TryLock takes the advisory lock name unless another backend holds it,
// without waiting. With ok, unlock releases it (and must be called);
// without, someone else does the locked work. On SQLite the one process
// always gets it.
func (s *Store) TryLock(ctx context.Context, name string) (unlock func(), ok bool, err error) {
	if s.eng != Postgres {
		return func() {}, true, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", name, err)
	}
	key := lockKey(name)
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil || !ok {
		_ = conn.Close()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", name, err)
		}
		return nil, false, nil
	}
	return func() {
		// Closing a connection whose unlock failed would return a session
		// still holding the lock to the pool: discard it instead.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}, true, nil
}

// lockKey is the advisory lock key of name: 64 bits of its FNV-1a hash.
func lockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("kandev:" + name))
	return int64(h.Sum64()) //nolint:gosec // the bits as they are: any 64-bit key will do
}
