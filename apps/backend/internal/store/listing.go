package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A cursor is the list it belongs to and the keyset of the last row of a
// page, base64url-encoded JSON ([list, keys...]). It is opaque to callers;
// a malformed cursor, or one from another list, is a VALIDATION_ERROR.

func encodeCursor(list string, keys ...any) string {
	b, _ := json.Marshal(append([]any{list}, keys...)) // strings and ints: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor decodes a cursor of list into exactly len(dst) values; each
// dst is a *string or *int64.
func decodeCursor(c, list string, dst ...any) error {
	bad := kanban.FieldError("cursor", "is not a valid cursor for this list")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return bad
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != len(dst)+1 {
		return bad
	}
	var tag string
	if json.Unmarshal(raw[0], &tag) != nil || tag != list {
		return bad
	}
	for i, d := range dst {
		if err := json.Unmarshal(raw[i+1], d); err != nil {
			return bad
		}
	}
	return nil
}

// PageBudget bounds the JSON size of one page: a page of large items
// (prompts, conversation messages, artifacts) ends early, with a
// next_cursor, so that no page outgrows what a client can read. A page
// always holds at least one item.
const PageBudget = 4 << 20

// withinBudget returns how many of rows (at most limit) fit PageBudget.
// With bound (an upper bound of a row's JSON size, or nil) a page whose
// bounds add up to less than the budget is known to fit without encoding
// its rows.
func withinBudget[T any](rows []T, limit int, bound func(T) int) int {
	n := min(len(rows), limit)
	if bound != nil {
		size := 0
		for _, r := range rows[:n] {
			size += bound(r) + 1
		}
		if size <= PageBudget {
			return n
		}
	}
	size := 0
	for i, r := range rows {
		if i == limit {
			return limit
		}
		b, err := json.Marshal(r)
		if err != nil {
			return max(i, 1)
		}
		size += len(b) + 1
		if size > PageBudget && i > 0 {
			return i
		}
	}
	return min(len(rows), limit)
}

// listing is how rows of one kind are listed a page at a time: the SELECT
// that reads them, how a row scans, and the keyset order pages follow
// (ORDER BY cols, all ascending or, with desc, all descending; the last
// column is unique). key returns a row's values of cols, each a string or
// an int: they are the cursor of a page that ends on that row.
type listing[T any] struct {
	what       string // error context: "list sessions"
	selectFrom string // "SELECT <columns> FROM <table>", our own constant SQL
	scan       func(rowSource) (*T, error)
	cols       []string
	desc       bool
	key        func(T) []any
	// bound, when set, bounds a row's JSON size from above (see
	// withinBudget); rows are encoded to be measured otherwise.
	bound func(T) int
	// keys64 says the integer keys are 64-bit columns (sparse task keys).
	keys64 bool
	// ranks, when set, gives a listed task's step, key and position: a
	// board-order page reads no positions and fills them in (fillRanks).
	ranks func(*T) (step string, key int64, pos *int)
}

// page returns page p (already normalized) of the rows matching where (SQL
// conditions with args; "" for all rows): at most p.Limit rows after p's
// cursor, with the cursor of the next page when more follow.
func (l listing[T]) page(ctx context.Context, q queryer, p kanban.Page, where string, args ...any) (*kanban.List[T], error) {
	query, args, err := l.query(p, where, args...)
	if err != nil {
		return nil, err
	}
	rows, err := scanAll(ctx, q, l.scan, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.what, err)
	}
	out := &kanban.List[T]{Items: rows}
	if out.Items == nil {
		out.Items = []T{}
	}
	if n := withinBudget(rows, p.Limit, l.bound); n < len(rows) {
		out.Items = rows[:n]
		out.NextCursor = encodeCursor(l.what, l.key(rows[n-1])...)
	}
	if l.ranks != nil {
		if err := fillRanks(ctx, q, out.Items, l.ranks); err != nil {
			return nil, fmt.Errorf("%s: %w", l.what, err)
		}
	}
	return out, nil
}

// query builds the SELECT of page: its conditions, the keyset condition
// of p's cursor, the order and a limit of p.Limit+1 rows (one more tells
// whether another page follows).
func (l listing[T]) query(p kanban.Page, where string, args ...any) (string, []any, error) {
	var conds []string
	if where != "" {
		conds = append(conds, where)
	}
	if p.Cursor != "" {
		after, err := l.after(p.Cursor)
		if err != nil {
			return "", nil, err
		}
		op := ") > ("
		if l.desc {
			op = ") < ("
		}
		conds = append(conds, "("+strings.Join(l.cols, ", ")+op+strings.TrimSuffix(strings.Repeat("?, ", len(after)), ", ")+")")
		args = append(args, after...)
	}
	query := l.selectFrom
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	dir := ""
	if l.desc {
		dir = " DESC"
	}
	query += " ORDER BY " + strings.Join(l.cols, dir+", ") + dir + " LIMIT ?"
	return query, append(args, p.Limit+1), nil
}

// after decodes cursor c into the values of cols it holds, typed as key
// returns them (strings stay strings, ints decode as int64).
func (l listing[T]) after(c string) ([]any, error) {
	var zero T
	vals := l.key(zero)
	dst := make([]any, len(vals))
	for i, v := range vals {
		if _, isText := v.(string); isText {
			dst[i] = new(string)
		} else {
			dst[i] = new(int64)
		}
	}
	if err := decodeCursor(c, l.what, dst...); err != nil {
		return nil, err
	}
	for i, d := range dst {
		switch d := d.(type) {
		case *string:
			vals[i] = *d
		case *int64:
			// Keyset integers (sequence numbers, step positions) are
			// 32-bit columns on PostgreSQL unless keys64 (task keys): a
			// larger one is no cursor of ours.
			if !l.keys64 && (*d < math.MinInt32 || *d > math.MaxInt32) {
				return nil, kanban.FieldError("cursor", "is not a valid cursor for this list")
			}
			vals[i] = *d
		}
	}
	return vals, nil
}
