package worktree

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxBranchLen bounds a branch name.
const maxBranchLen = 255

// checkBranch refuses a branch name git would refuse or could read as
// something else (an option, a revision range, a reflog selector). It is
// deliberately minimal and private: kanban.CheckBranch (branch scope)
// replaces it once that lands. Its messages never echo the name.
func checkBranch(field, name string) error {
	bad := func(why string) error { return invalid(field, "must be a git branch name ("+why+")") }
	switch {
	case name == "":
		return invalid(field, "is required")
	case !utf8.ValidString(name) || len(name) > maxBranchLen:
		return bad("valid UTF-8, at most 255 bytes")
	case name[0] == '-':
		return bad(`no leading "-"`)
	case name == "HEAD" || name == "@":
		return bad(`"HEAD" and "@" are reserved`)
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return bad(`no "..", "@{" or "//"`)
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") || strings.HasPrefix(name, "/"):
		return bad(`no leading "/", no trailing "/" or "."`)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || strings.ContainsRune("~^:?*[\\", r) {
			return bad(`no spaces, control characters or ~^:?*[\`)
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return bad(`no part starting with "." or ending with ".lock"`)
		}
	}
	return nil
}
