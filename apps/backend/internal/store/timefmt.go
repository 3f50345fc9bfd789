package store

import (
	"database/sql"
	"time"
)

// timeLayout is fixed-width so that text order equals time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		// Rows are written only by fmtTime; a parse failure means a corrupt row.
		return time.Time{}
	}
	return t
}

func parseTimePtr(ns sql.NullString) *time.Time {
	if !ns.Valid {
		return nil
	}
	t := parseTime(ns.String)
	return &t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
