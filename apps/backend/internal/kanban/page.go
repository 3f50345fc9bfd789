package kanban

// Pagination bounds shared by every list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
	MaxCursorLen = 512 // an opaque cursor (a page's, or a conversation's before/after)
)

// Page is the pagination request of every list: Limit 0 means DefaultLimit;
// Cursor is the opaque NextCursor of a previous page, empty for the first.
type Page struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Normalize applies the default limit and checks bounds.
func (p Page) Normalize() (Page, error) {
	if p.Limit == 0 {
		p.Limit = DefaultLimit
	}
	if p.Limit < 1 || p.Limit > MaxLimit {
		return p, FieldError("limit", "must be between 1 and %d", MaxLimit)
	}
	if len(p.Cursor) > MaxCursorLen {
		return p, FieldError("cursor", "is not a valid cursor")
	}
	return p, nil
}

// List is one page of a list. NextCursor is empty on the last page.
type List[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}
