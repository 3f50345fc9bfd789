package store

import "testing"

// TestStatementKind: a span names the statement's kind from a closed
// set, never its text.
func TestStatementKind(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT id FROM tasks WHERE title = 'secret'": "SELECT",
		"\n\t  select 1":                       "SELECT",
		"(SELECT 1) UNION (SELECT 2)":          "SELECT",
		"insert into tasks values (?)":         "INSERT",
		"UPDATE tasks SET title = ?":           "UPDATE",
		"DELETE FROM tasks":                    "DELETE",
		"WITH x AS (SELECT 1) SELECT * FROM x": "WITH",
		"secret-canary DROP TABLE tasks":       "OTHER",
		"":                                     "OTHER",
		"SEL":                                  "OTHER",
	} {
		if got := statementKind(q); got != want {
			t.Errorf("statementKind(%.20q) = %q, want %q", q, got, want)
		}
	}
}
