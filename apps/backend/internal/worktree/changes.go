package worktree

import (
	"context"
	"encoding/base64"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxUntrackedRead bounds the bytes of untracked files one Changes call
// reads to count their lines; files past it are reported TooLarge.
const maxUntrackedRead = 256 << 20

// bigFileThreshold makes git report a side over MaxFileBytes as binary
// (no line counts, no patch): the same bound as MaxFileBytes.
var bigFileThreshold = [2]string{"core.bigFileThreshold", strconv.Itoa(MaxFileBytes)}

// Status is how a file changed against the merge-base.
type Status string

// Statuses of a Change.
const (
	StatusAdded    Status = "added"
	StatusModified Status = "modified"
	StatusDeleted  Status = "deleted"
	StatusRenamed  Status = "renamed"
)

// Change is one changed file of a worktree against the merge-base with
// its base branch. Staged, Unstaged and Untracked say where the change is
// now; a change with none of them is committed on the task branch.
// Additions and Deletions are line counts, meaningful unless Binary or
// TooLarge.
type Change struct {
	Path      string `json:"path"`
	OldPath   string `json:"old_path,omitempty"` // the path before a rename
	Status    Status `json:"status"`
	Staged    bool   `json:"staged"`
	Unstaged  bool   `json:"unstaged"`
	Untracked bool   `json:"untracked"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	// Binary: git (or, for an untracked file, its first 8000 bytes) says
	// the content is binary.
	Binary bool `json:"binary"`
	// TooLarge: a side is over MaxFileBytes, so its content is neither
	// counted nor diffed.
	TooLarge bool `json:"too_large"`
}

// Changes is one page of a worktree's changes, sorted by path (bytewise),
// with what the page was measured against.
type Changes struct {
	kanban.List[Change]
	MergeBase string `json:"merge_base"` // the commit changes are measured against
	Head      string `json:"head"`       // the worktree's HEAD commit
	Total     int    `json:"total"`      // changed files in all pages
	Additions int    `json:"additions"`  // over all pages
	Deletions int    `json:"deletions"`
}

// Changes lists the worktree's changed files against the merge-base of
// HEAD and the base branch: committed, staged, unstaged and untracked
// changes together (ignored files are not changes). Three git commands
// (merge-base, status, diff) whatever the page. The cursor is the last
// path of the previous page, so a page never repeats or skips a file that
// was there before and after.
func (t *Tree) Changes(ctx context.Context, page kanban.Page) (*Changes, error) {
	page, err := page.Normalize()
	if err != nil {
		return nil, err
	}
	after, offset, err := decodePathCursor(page.Cursor)
	if err != nil {
		return nil, err
	}
	mb, err := t.mergeBase(ctx)
	if err != nil {
		return nil, err
	}
	all, head, err := t.changes(ctx, mb, nil)
	if err != nil {
		return nil, err
	}
	out := &Changes{MergeBase: mb, Head: head, Total: len(all)}
	for _, c := range all {
		out.Additions += c.Additions
		out.Deletions += c.Deletions
	}
	start := offset
	if after != "" {
		start, _ = slices.BinarySearchFunc(all, after, func(c Change, p string) int { return strings.Compare(c.Path, p+"\x00") })
	}
	start = min(start, len(all))
	end := min(start+page.Limit, len(all))
	out.Items = all[start:end]
	if end < len(all) {
		out.NextCursor = encodePathCursor(all[end-1].Path, end)
	}
	return out, nil
}

// changes computes every change (sorted by path), limited to pathspec
// when given, and returns HEAD's commit.
func (t *Tree) changes(ctx context.Context, mb string, pathspec []string) ([]Change, string, error) {
	statusArgs := []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames", "--ignore-submodules=none", "--"}
	st, err := t.output(ctx, "status", append(statusArgs, pathspec...)...)
	if err != nil {
		return nil, "", err
	}
	status := parseStatus(st)
	diffArgs := []string{"diff", "--raw", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", "--end-of-options", mb, "--"}
	res, err := t.git(ctx, call{op: "diff", args: append(diffArgs, pathspec...), config: [][2]string{bigFileThreshold}})
	if err != nil {
		return nil, "", err
	}
	if res.exit != 0 {
		return nil, "", gitFailure("diff", res)
	}
	entries := parseDiff(res.out)

	flags := make(map[string]statusEntry, len(status.entries))
	for _, e := range status.entries {
		flags[e.path] = e
	}
	all := make([]Change, 0, len(entries)+len(status.entries))
	seen := make(map[string]bool, len(entries))
	var sizeless []int // binary per git: decide binary or too large
	for _, e := range entries {
		c := Change{Path: e.path, OldPath: e.oldPath, Status: e.status, Additions: e.additions, Deletions: e.deletions, Binary: e.binary}
		for _, p := range []string{e.path, e.oldPath} {
			if f, ok := flags[p]; ok && p != "" {
				c.Staged, c.Unstaged = c.Staged || f.staged, c.Unstaged || f.unstaged
			}
		}
		seen[e.path] = true
		if c.Binary {
			sizeless = append(sizeless, len(all))
		}
		all = append(all, c)
	}
	root, err := t.root()
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = root.Close() }()
	budget := maxUntrackedRead
	for _, e := range status.entries {
		if !e.untracked || seen[e.path] {
			continue
		}
		all = append(all, untrackedChange(root, e.path, &budget))
	}
	if err := t.sizeBinaries(ctx, root, mb, all, sizeless); err != nil {
		return nil, "", err
	}
	slices.SortFunc(all, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return all, status.head, nil
}

// untrackedChange describes an untracked file, reading it (through root,
// never following a symlink) to count its lines as git would.
func untrackedChange(root *os.Root, p string, budget *int) Change {
	c := Change{Path: p, Status: StatusAdded, Untracked: true}
	fi, err := stat(root, p)
	switch {
	case err != nil || !fi.exists:
		return c // it went away, or it is behind a symlink: listed, nothing read
	case fi.size > MaxFileBytes || int(fi.size) > *budget:
		c.TooLarge = true
		return c
	}
	b, err := content(root, p, fi)
	if err != nil {
		return c
	}
	*budget -= len(b)
	if isBinary(b) {
		c.Binary = true
		return c
	}
	c.Additions = countLines(b)
	return c
}

// sizeBinaries tells binary changes from too-large ones (git reports both
// as binary under core.bigFileThreshold): the worktree side by its size on
// disk, the merge-base side with one `git ls-tree -l`.
func (t *Tree) sizeBinaries(ctx context.Context, root *os.Root, mb string, all []Change, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	olds := make([]string, 0, len(idx))
	for _, i := range idx {
		c := &all[i]
		if c.Status != StatusDeleted {
			if fi, err := stat(root, c.Path); err == nil && fi.size > MaxFileBytes {
				c.TooLarge = true
			}
		}
		olds = append(olds, c.oldOrPath())
	}
	sizes, err := t.baseSizes(ctx, mb, olds)
	if err != nil {
		return err
	}
	for _, i := range idx {
		if sizes[all[i].oldOrPath()] > MaxFileBytes {
			all[i].TooLarge = true
		}
		if all[i].TooLarge {
			all[i].Binary = false
		}
	}
	return nil
}

func (c Change) oldOrPath() string {
	if c.OldPath != "" {
		return c.OldPath
	}
	return c.Path
}

// baseSizes returns the sizes of paths' blobs in commit (absent paths are
// missing from the map).
func (t *Tree) baseSizes(ctx context.Context, commit string, paths []string) (map[string]int64, error) {
	out, err := t.output(ctx, "ls-tree", append([]string{"ls-tree", "-l", "-z", "--full-tree", "--end-of-options", commit, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	sizes := make(map[string]int64, len(paths))
	for _, rec := range splitNUL(out) {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			continue
		}
		if n, err := strconv.ParseInt(f[3], 10, 64); err == nil {
			sizes[path] = n
		}
	}
	return sizes, nil
}

// A path cursor is "p" + the last path (base64url), or "i" + an offset
// when the path is too long for a cursor.
func encodePathCursor(last string, next int) string {
	c := "p" + base64.RawURLEncoding.EncodeToString([]byte(last))
	if len(c) > kanban.MaxCursorLen {
		return "i" + strconv.Itoa(next)
	}
	return c
}

func decodePathCursor(c string) (after string, offset int, err error) {
	bad := invalid("cursor", "is not a valid cursor")
	switch {
	case c == "":
		return "", 0, nil
	case c[0] == 'p':
		b, err := base64.RawURLEncoding.DecodeString(c[1:])
		if err != nil || len(b) == 0 {
			return "", 0, bad
		}
		return string(b), 0, nil
	case c[0] == 'i':
		n, err := strconv.Atoi(c[1:])
		if err != nil || n < 0 {
			return "", 0, bad
		}
		return "", n, nil
	}
	return "", 0, bad
}
