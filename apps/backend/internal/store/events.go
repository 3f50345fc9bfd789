package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EventChannel is the PostgreSQL notification channel of the event log.
const EventChannel = "kandev_events"

// ErrNoEventLog is returned by the event log's methods on SQLite, where
// events never leave the process.
var ErrNoEventLog = errors.New("the event log needs PostgreSQL")

// Event is one entry of the event log: an event a backend published, for
// the other backends to deliver to their own subscribers.
type Event struct {
	ID      int64
	Origin  string // the backend that published it
	Topic   string // "workspace:<id>", "session:<id>", or "" for a signal between backends
	Name    string // task.created, question.answered, ...
	Payload string // JSON
	At      time.Time
	// Trace is the W3C traceparent of the publishing span ("" when
	// tracing is off); one longer than MaxTraceparent is stored as "".
	Trace string
}

// MaxTraceparent bounds Event.Trace: a version-00 traceparent is 55 bytes.
const MaxTraceparent = 55

// AppendEvents appends evs (from backend origin) to the event log and, in
// the same transaction, notifies EventChannel of their ids as "first-last":
// the notification arrives once the rows are visible, and stays far under
// PostgreSQL's 8000-byte payload limit however large the events are.
func (s *Store) AppendEvents(ctx context.Context, origin string, evs []Event) error {
	if s.eng != Postgres {
		return ErrNoEventLog
	}
	if len(evs) == 0 {
		return nil
	}
	n := len(evs)
	topics, names, payloads, traces := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, e := range evs {
		topics[i], names[i], payloads[i] = e.Topic, e.Name, e.Payload
		if len(e.Trace) <= MaxTraceparent {
			traces[i] = e.Trace
		}
	}
	// One statement: the rows, then the notification of their id range.
	const q = `WITH ins AS (INSERT INTO cluster_events (origin, topic, event, payload, traceparent, created_at)
		SELECT $1, t, e, p, tp, $6 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(t, e, p, tp, n)
		ORDER BY n RETURNING id)
		SELECT pg_notify('` + EventChannel + `', MIN(id)::text || '-' || MAX(id)::text) FROM ins`
	if _, err := s.db.ExecContext(ctx, q, origin, topics, names, payloads, traces, fmtTime(time.Now())); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// ReadEvents returns the events with ids first..last (at most limit),
// in order.
func (s *Store) ReadEvents(ctx context.Context, first, last int64, limit int) ([]Event, error) {
	return s.readEvents(ctx, `WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT $3`, first, last, limit)
}

// EventsAfter returns up to limit events with ids above id, in order:
// what a backend missed while it was not listening.
func (s *Store) EventsAfter(ctx context.Context, id int64, limit int) ([]Event, error) {
	return s.readEvents(ctx, `WHERE id > $1 ORDER BY id LIMIT $2`, id, limit)
}

// LastEventID is the newest event's id (0 when the log is empty).
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	if s.eng != Postgres {
		return 0, ErrNoEventLog
	}
	var id int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM cluster_events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	return id, nil
}

func (s *Store) readEvents(ctx context.Context, where string, args ...any) ([]Event, error) {
	if s.eng != Postgres {
		return nil, ErrNoEventLog
	}
	scan := func(r rowSource) (*Event, error) {
		var e Event
		var at string
		if err := r.Scan(&e.ID, &e.Origin, &e.Topic, &e.Name, &e.Payload, &e.Trace, &at); err != nil {
			return nil, err
		}
		e.At = parseTime(at)
		return &e, nil
	}
	out, err := scanAll(ctx, s.db, scan, `SELECT id, origin, topic, event, payload, traceparent, created_at FROM cluster_events `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// PruneEvents deletes the events appended before cutoff.
func (s *Store) PruneEvents(ctx context.Context, cutoff time.Time) error {
	if s.eng != Postgres {
		return ErrNoEventLog
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM cluster_events WHERE created_at < $1`, fmtTime(cutoff)); err != nil {
		return fmt.Errorf("prune events: %w", err)
	}
	return nil
}

// Listener is a connection of its own that listens on EventChannel.
type Listener struct {
	conn *pgx.Conn
	ctx  context.Context // Listen's: Close's values
}

// Listen opens a connection outside the pool and listens on EventChannel.
func (s *Store) Listen(ctx context.Context) (*Listener, error) {
	if s.eng != Postgres {
		return nil, ErrNoEventLog
	}
	conn, err := pgx.ConnectConfig(ctx, s.pg.cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+EventChannel); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("listen: %w", err)
	}
	return &Listener{conn: conn, ctx: ctx}, nil
}

// Wait returns the id range of the next notification, waiting until one
// arrives, ctx ends or the connection fails (then the listener is done:
// close it and listen again).
func (l *Listener) Wait(ctx context.Context) (first, last int64, err error) {
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		return 0, 0, err
	}
	return parseRange(n)
}

func parseRange(n *pgconn.Notification) (int64, int64, error) {
	a, b, ok := strings.Cut(n.Payload, "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || first > last {
		return 0, 0, fmt.Errorf("listen: a notification that is no id range")
	}
	return first, last, nil
}

// Close closes the listener's connection, within a bound of its own (its
// listening may have ended with its context).
func (l *Listener) Close() error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), 5*time.Second)
	defer cancel()
	return l.conn.Close(ctx)
}
