package worktree

import (
	"bytes"
	"strconv"
	"strings"
)

// Parsers of git's -z machine formats. Each is total: a record it does not
// understand is skipped, never guessed at, and nothing here panics on
// malformed input (git's output is trusted to be git's, but a truncated
// output must not crash the server).

// statusEntry is one path of `git status --porcelain=v2 -z --no-renames`.
type statusEntry struct {
	path      string
	staged    bool // index differs from HEAD
	unstaged  bool // worktree differs from index
	untracked bool
}

// statusOutput is the parsed `git status --porcelain=v2 -z --branch`.
type statusOutput struct {
	head    string // HEAD commit ("" when unborn)
	branch  string // checked-out branch name ("" when detached)
	entries []statusEntry
}

func parseStatus(out []byte) statusOutput {
	var s statusOutput
	toks := splitNUL(out)
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if len(tok) < 2 {
			continue
		}
		switch tok[0] {
		case '#':
			if v, ok := strings.CutPrefix(tok, "# branch.oid "); ok && v != "(initial)" {
				s.head = v
			} else if v, ok := strings.CutPrefix(tok, "# branch.head "); ok && v != "(detached)" {
				s.branch = v
			}
		case '?':
			s.entries = append(s.entries, statusEntry{path: tok[2:], untracked: true})
		case '1', '2', 'u':
			// 1 XY sub mH mI mW hH hI path; 2 adds Xscore and a second
			// token (the original path); u has three modes and hashes.
			n := map[byte]int{'1': 8, '2': 9, 'u': 10}[tok[0]]
			f := strings.SplitN(tok, " ", n+1)
			if len(f) != n+1 || len(f[1]) != 2 {
				continue
			}
			x, y := f[1][0], f[1][1]
			e := statusEntry{path: f[n], staged: x != '.', unstaged: y != '.'}
			if tok[0] == 'u' {
				e.staged, e.unstaged = true, true
			}
			s.entries = append(s.entries, e)
			if tok[0] == '2' {
				i++ // the original path; --no-renames makes this rare (copies)
			}
		}
	}
	return s
}

// diffEntry is one file of `git diff --raw --numstat -z -M`.
type diffEntry struct {
	path, oldPath string
	status        Status
	additions     int
	deletions     int
	binary        bool // numstat "-": binary, or a side over core.bigFileThreshold
}

// parseDiff reads the raw records (":mM mW hM hW S\0path\0[dst\0]") and then
// the numstat records ("A\tD\tpath\0" or "A\tD\t\0src\0dst\0") that
// `--raw --numstat -z` prints, one of each per file, in the same order.
func parseDiff(out []byte) []diffEntry {
	toks := splitNUL(out)
	var entries []diffEntry
	byPath := map[string]int{}
	i := 0
	for i < len(toks) && strings.HasPrefix(toks[i], ":") {
		f := strings.Fields(toks[i])
		i++
		if len(f) != 5 || len(f[4]) == 0 || i >= len(toks) {
			break
		}
		e := diffEntry{status: statusOf(f[4][0])}
		if f[4][0] == 'R' || f[4][0] == 'C' {
			if i+1 >= len(toks) {
				break
			}
			e.oldPath, e.path = toks[i], toks[i+1]
			i += 2
			if f[4][0] == 'C' {
				e.oldPath = "" // a copy is a new file; its source is unchanged
			}
		} else {
			e.path = toks[i]
			i++
		}
		byPath[e.path] = len(entries)
		entries = append(entries, e)
	}
	for i < len(toks) {
		f := strings.SplitN(toks[i], "\t", 3)
		i++
		if len(f) != 3 {
			continue
		}
		path := f[2]
		if path == "" { // a rename or copy: src and dst follow
			if i+1 >= len(toks) {
				break
			}
			path = toks[i+1]
			i += 2
		}
		k, ok := byPath[path]
		if !ok {
			continue
		}
		if f[0] == "-" || f[1] == "-" {
			entries[k].binary = true
			continue
		}
		entries[k].additions, _ = strconv.Atoi(f[0])
		entries[k].deletions, _ = strconv.Atoi(f[1])
	}
	return entries
}

func statusOf(c byte) Status {
	switch c {
	case 'A', 'C':
		return StatusAdded
	case 'D':
		return StatusDeleted
	case 'R':
		return StatusRenamed
	}
	return StatusModified // M, T (type change), U (unmerged), X
}

// splitNUL splits NUL-terminated records, dropping the final empty one.
func splitNUL(out []byte) []string {
	out = bytes.TrimSuffix(out, []byte{0})
	if len(out) == 0 {
		return nil
	}
	return strings.Split(string(out), "\x00")
}
