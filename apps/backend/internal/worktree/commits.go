package worktree

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxSubject bounds a listed commit's subject.
const maxSubject = 1 << 10

// Commit is one commit on the task branch.
type Commit struct {
	SHA            string    `json:"sha"`
	Parents        []string  `json:"parents"`
	Subject        string    `json:"subject"` // the first line, at most 1 KiB
	AuthorName     string    `json:"author_name"`
	AuthorEmail    string    `json:"author_email"`
	AuthoredAt     time.Time `json:"authored_at"`
	CommitterName  string    `json:"committer_name"`
	CommitterEmail string    `json:"committer_email"`
	CommittedAt    time.Time `json:"committed_at"`
}

// logFormat prints the fields of Commit, NUL-separated (with -z, commits
// are NUL-separated too: a record is always commitFields tokens).
const (
	logFormat    = "--format=%H%x00%P%x00%s%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI"
	commitFields = 9
)

// Commits lists the commits on the task branch that the base branch does
// not have, newest first. The first page fixes both tips; the cursor
// carries them, so later pages continue the same list even when either
// branch moves (a cursor whose commits were garbage-collected is refused).
func (t *Tree) Commits(ctx context.Context, page kanban.Page) (*kanban.List[Commit], error) {
	page, err := page.Normalize()
	if err != nil {
		return nil, err
	}
	var tip, base string
	var offset int
	if page.Cursor != "" {
		if tip, base, offset, err = decodeCommitCursor(page.Cursor); err != nil {
			return nil, err
		}
	} else {
		if tip, err = t.resolve(ctx, t.headRef); err != nil {
			return nil, err
		}
		if base, err = t.resolve(ctx, t.baseRef); err != nil {
			return nil, err
		}
	}
	args := []string{"log", "-z", logFormat, "--skip=" + strconv.Itoa(offset), "--max-count=" + strconv.Itoa(page.Limit+1), "--end-of-options", tip, "^" + base, "--"}
	res, err := t.git(ctx, call{op: "log", args: args})
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		if page.Cursor != "" {
			return nil, invalid("cursor", "has expired (its commits are gone); start from the first page")
		}
		return nil, gitFailure("log", res)
	}
	commits := parseLog(res.out)
	out := &kanban.List[Commit]{Items: commits}
	if len(commits) > page.Limit {
		out.Items = commits[:page.Limit]
		out.NextCursor = tip + "." + base + "." + strconv.Itoa(offset+page.Limit)
	}
	return out, nil
}

func decodeCommitCursor(c string) (tip, base string, offset int, err error) {
	bad := invalid("cursor", "is not a valid cursor")
	f := strings.Split(c, ".")
	if len(f) != 3 || !isHex(f[0]) || !isHex(f[1]) {
		return "", "", 0, bad
	}
	n, convErr := strconv.Atoi(f[2])
	if convErr != nil || n < 0 {
		return "", "", 0, bad
	}
	return f[0], f[1], n, nil
}

// isHex reports whether s is a full object name (SHA-1 or SHA-256).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func parseLog(out []byte) []Commit {
	toks := splitNUL(out)
	commits := []Commit{}
	for i := 0; i+commitFields <= len(toks); i += commitFields {
		f := toks[i : i+commitFields]
		c := Commit{SHA: f[0], Subject: boundText(f[2], maxSubject), AuthorName: f[3], AuthorEmail: f[4],
			CommitterName: f[6], CommitterEmail: f[7], Parents: strings.Fields(f[1])}
		c.AuthoredAt, _ = time.Parse(time.RFC3339, f[5])
		c.CommittedAt, _ = time.Parse(time.RFC3339, f[8])
		if c.Parents == nil {
			c.Parents = []string{}
		}
		commits = append(commits, c)
	}
	return commits
}

// boundText cuts s to at most n bytes at a rune boundary and makes it
// valid UTF-8 (commit messages need not be).
func boundText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
