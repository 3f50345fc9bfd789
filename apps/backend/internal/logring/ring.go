// Package logring keeps a process's most recent log records in memory,
// bounded in count and in bytes, so that a diagnostic bundle can include
// them when the backend writes its log nowhere it could read back (stderr).
//
// It imports only the standard library. Records are kept as the text
// handler formats them; whoever shows them redacts them first.
package logring

import (
	"log/slog"
	"sync"
)

// Defaults of New.
const (
	DefaultRecords = 2000
	DefaultBytes   = 1 << 20
	// MaxRecordBytes bounds one kept record; longer ones are cut.
	MaxRecordBytes = 8 << 10
)

// cut ends a record that was cut to MaxRecordBytes.
const cut = "…[cut]\n"

// Ring is a bounded buffer of the most recent records: an io.Writer that
// takes one record per Write (as slog's text handler writes them).
type Ring struct {
	mu         sync.Mutex
	maxRecords int
	maxBytes   int
	recs       [][]byte // circular, len(recs) == maxRecords once full
	head       int      // index of the oldest record
	n          int      // records kept
	size       int      // bytes kept
	dropped    int64    // records evicted since start
}

// New returns a ring keeping at most records records and bytes bytes
// (defaults when not positive).
func New(records, bytes int) *Ring {
	if records <= 0 {
		records = DefaultRecords
	}
	if bytes <= 0 {
		bytes = DefaultBytes
	}
	return &Ring{maxRecords: records, maxBytes: bytes, recs: make([][]byte, records)}
}

// Write keeps a copy of p as one record, evicting the oldest records to
// stay within the bounds. It never fails.
func (r *Ring) Write(p []byte) (int, error) {
	n := len(p)
	rec := p
	if len(rec) > MaxRecordBytes {
		rec = append(append(make([]byte, 0, MaxRecordBytes+len(cut)), rec[:MaxRecordBytes]...), cut...)
	} else {
		rec = append([]byte(nil), rec...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n > 0 && (r.n == r.maxRecords || r.size+len(rec) > r.maxBytes) {
		r.size -= len(r.recs[r.head])
		r.recs[r.head] = nil
		r.head = (r.head + 1) % r.maxRecords
		r.n--
		r.dropped++
	}
	r.recs[(r.head+r.n)%r.maxRecords] = rec
	r.n++
	r.size += len(rec)
	return n, nil
}

// Records returns the kept records, oldest first, and how many older ones
// were evicted.
func (r *Ring) Records() (recs [][]byte, dropped int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]byte, r.n)
	for i := range r.n {
		out[i] = r.recs[(r.head+i)%r.maxRecords]
	}
	return out, r.dropped
}

// Tee returns a handler that passes every record to next and keeps those
// at level or above, formatted as text, in the ring.
func (r *Ring) Tee(next slog.Handler, level slog.Leveler) slog.Handler {
	return slog.NewMultiHandler(next, slog.NewTextHandler(r, &slog.HandlerOptions{Level: level}))
}
