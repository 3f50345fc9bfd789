package action

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestCleanCommitMessage: the agent's answer is trimmed and a code fence
// around it (with or without a language tag) dropped; an empty answer or
// one over kanban.MaxCommitMessageBytes is refused.
func TestCleanCommitMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  Add the parser\n", "Add the parser"},
		{"```Add the parser```", "Add the parser"},
		{"```\nAdd the parser\n\nWith tests.\n```", "Add the parser\n\nWith tests."},
		{"```text\nAdd the parser\n```", "Add the parser"},
		{"```Fix the bug in x\n\nbody```", "Fix the bug in x\n\nbody"},
	} {
		got, err := cleanCommitMessage(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "  \n", "``````", strings.Repeat("x", kanban.MaxCommitMessageBytes+1)} {
		if _, err := cleanCommitMessage(in); kanban.ErrorCode(err) != kanban.CodeUnavailable {
			t.Errorf("%.20q: got %v, want a refusal", in, err)
		}
	}
}
