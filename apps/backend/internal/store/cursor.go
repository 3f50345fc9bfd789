package store

import (
	"encoding/base64"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A cursor is the keyset of the last row of a page, base64url-encoded JSON
// ([]any). It is opaque to callers; a malformed one is a VALIDATION_ERROR.

func encodeCursor(keys ...any) string {
	b, _ := json.Marshal(keys) // keys are strings and ints: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor decodes a cursor into exactly len(dst) values; each dst is a
// *string or *int64.
func decodeCursor(c string, dst ...any) error {
	bad := kanban.FieldError("cursor", "is not a valid cursor")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return bad
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != len(dst) {
		return bad
	}
	for i, d := range dst {
		if err := json.Unmarshal(raw[i], d); err != nil {
			return bad
		}
	}
	return nil
}

// page trims rows fetched with limit+1 to limit and builds the next cursor
// from the last kept row.
func page[T any](rows []T, limit int, key func(T) []any) *kanban.List[T] {
	out := &kanban.List[T]{Items: rows}
	if out.Items == nil {
		out.Items = []T{}
	}
	if len(rows) > limit {
		out.Items = rows[:limit]
		out.NextCursor = encodeCursor(key(rows[limit-1])...)
	}
	return out
}
