package store

import (
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine names a database engine the store runs on.
type Engine string

// The engines. SQLite is the embedded default; PostgreSQL is the shared
// store of several backends.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Engine returns the engine s runs on.
func (s *Store) Engine() Engine { return s.eng }

// The SQL of the store is written once, with `?` placeholders, in the
// syntax both engines share. What differs per engine is kept here: the
// placeholder form, how errors are classified, and (postgres.go) how
// transactions are isolated.

// Rebind returns query, written with `?` placeholders, in s's engine's
// placeholder form: for callers of DB() that run the store's dialect.
func (s *Store) Rebind(query string) string {
	if s.eng == Postgres {
		return rebind(query)
	}
	return query
}

// rebind turns the `?` placeholders of query into PostgreSQL's $1, $2, ...
// A `?` inside a quoted literal or identifier is left alone.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isUniqueConstraint reports whether err is a UNIQUE or PRIMARY KEY
// violation, on either engine.
func isUniqueConstraint(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" // unique_violation (primary keys included)
}

// isRetryable reports whether err ended a PostgreSQL transaction that
// may succeed when run again from the start: a serialization failure of
// SERIALIZABLE isolation, a deadlock the server broke, or a lock table
// momentarily full (out_of_shared_memory: SERIALIZABLE's predicate locks
// of many concurrent writers, freed as they finish).
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "53200")
}
