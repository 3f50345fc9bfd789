package worktree

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Lines of a diff: what a review comment is anchored to. A line's text is
// its content without its newline; the text of a range is its lines
// joined by "\n" — the same whether it is read from a patch or from a
// file, so an anchor taken from the diff can be compared with the file
// later.

// LineRange names lines Start..End (1-based, inclusive) of one side of a
// changed file: the new side is the file in the worktree, the old side the
// file at the merge-base (at the path it had there, for a rename).
type LineRange struct {
	Path       string
	Side       kanban.DiffSide
	Start, End int
}

// DiffLines returns the text of lines start..end of side as patch shows
// them, and whether the whole range is in one hunk of patch (context
// lines count: they are part of the diff the operator sees).
func DiffLines(patch string, side kanban.DiffSide, start, end int) (string, bool) {
	if start < 1 || end < start {
		return "", false
	}
	var got []string
	inHunk := false
	var oldN, newN int
	for line := range strings.Lines(patch) {
		if strings.HasPrefix(line, "@@ ") {
			if len(got) > 0 { // the range would continue in another hunk
				return "", false
			}
			o, n, ok := hunkStarts(line)
			inHunk, oldN, newN = ok, o, n
			continue
		}
		if !inHunk || line == "" {
			continue
		}
		text := strings.TrimSuffix(line[1:], "\n")
		var num int
		switch line[0] {
		case ' ':
			num = newN
			if side == kanban.SideOld {
				num = oldN
			}
			oldN, newN = oldN+1, newN+1
		case '+':
			num, newN = newN, newN+1
			if side == kanban.SideOld {
				continue
			}
		case '-':
			num, oldN = oldN, oldN+1
			if side == kanban.SideNew {
				continue
			}
		default: // "\ No newline at end of file", or the next file's header
			continue
		}
		if num >= start && num <= end {
			got = append(got, text)
			if num == end {
				return strings.Join(got, "\n"), len(got) == end-start+1
			}
		}
	}
	return "", false
}

// hunkStarts reads "@@ -a[,b] +c[,d] @@": the first old and new line.
func hunkStarts(h string) (oldStart, newStart int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 3 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	num := func(s string) (int, bool) {
		s, _, _ = strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0
	}
	o, ok1 := num(f[1])
	n, ok2 := num(f[2])
	// A side with no lines starts at 0 ("-0,0"); its first line would be 1.
	return max(o, 1), max(n, 1), ok1 && ok2
}

// textLines returns lines start..end of b (false when b is shorter).
func textLines(b []byte, start, end int) (string, bool) {
	var got []string
	n := 0
	for line := range bytes.Lines(b) {
		n++
		if n > end {
			break
		}
		if n >= start {
			got = append(got, strings.TrimSuffix(string(line), "\n"))
		}
	}
	if len(got) != end-start+1 {
		return "", false
	}
	return strings.Join(got, "\n"), true
}

// Anchors is the current text of line ranges: Texts[i] is range i's text,
// Present[i] false when the range is no longer there (the file has no
// changes against the base branch any more, its side is gone, it is binary
// or too large, or it has fewer lines).
type Anchors struct {
	Head      string
	MergeBase string
	Texts     []string
	Present   []bool
}

// maxBlobBatch bounds the merge-base files one `git cat-file --batch`
// reads (each at most MaxFileBytes).
const maxBlobBatch = 32

// Anchors reads the current text of each range: one merge-base, status
// and diff for all of them, each new side read from the worktree (through
// os.Root) and the old sides from the merge-base in batches. Paths are
// checked as Diff checks them; a refused path fails the call.
func (t *Tree) Anchors(ctx context.Context, ranges []LineRange) (*Anchors, error) {
	for _, r := range ranges {
		if err := checkPath("path", r.Path); err != nil {
			return nil, err
		}
	}
	mb, err := t.mergeBase(ctx)
	if err != nil {
		return nil, err
	}
	all, head, err := t.changes(ctx, mb, nil)
	if err != nil {
		return nil, err
	}
	byPath := make(map[string]*Change, len(all))
	for i := range all {
		byPath[all[i].Path] = &all[i]
	}
	out := &Anchors{Head: head, MergeBase: mb, Texts: make([]string, len(ranges)), Present: make([]bool, len(ranges))}
	files, err := t.sideFiles(ctx, mb, ranges, byPath)
	if err != nil {
		return nil, err
	}
	for i, r := range ranges {
		if b, ok := files[sideKey(r.Side, r.Path)]; ok {
			out.Texts[i], out.Present[i] = textLines(b, r.Start, r.End)
		}
	}
	return out, nil
}

func sideKey(side kanban.DiffSide, path string) string { return string(side) + "\x00" + path }

// sideFiles reads the content of each side the ranges name (keyed by
// sideKey) that exists and is neither binary nor too large.
func (t *Tree) sideFiles(ctx context.Context, mb string, ranges []LineRange, byPath map[string]*Change) (map[string][]byte, error) {
	root, err := t.root()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	files := map[string][]byte{}
	var olds []string // merge-base paths to read
	oldOf := map[string]string{}
	for _, r := range ranges {
		c, key := byPath[r.Path], sideKey(r.Side, r.Path)
		if _, done := files[key]; done || c == nil || c.Binary || c.TooLarge {
			continue
		}
		if r.Side == kanban.SideOld {
			if c.Status != StatusAdded && oldOf[c.oldOrPath()] == "" {
				oldOf[c.oldOrPath()] = key
				olds = append(olds, c.oldOrPath())
			}
			continue
		}
		if c.Status == StatusDeleted {
			continue
		}
		fi, err := stat(root, r.Path)
		if err != nil || !fi.exists || fi.size > MaxFileBytes {
			continue // behind a symlink, gone, or grown past the bound since the diff
		}
		if b, err := content(root, r.Path, fi); err == nil && !isBinary(b) {
			files[key] = b
		}
	}
	for len(olds) > 0 {
		n := min(len(olds), maxBlobBatch)
		blobs, err := t.blobs(ctx, mb, olds[:n])
		if err != nil {
			return nil, err
		}
		for p, b := range blobs {
			files[oldOf[p]] = b
		}
		olds = olds[n:]
	}
	return files, nil
}

// blobs reads paths of commit with one `git cat-file --batch` (paths on
// stdin, never as arguments); a missing or oversized one is left out.
func (t *Tree) blobs(ctx context.Context, commit string, paths []string) (map[string][]byte, error) {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(commit + ":" + p + "\n")
	}
	res, err := t.git(ctx, call{op: "cat-file", args: []string{"cat-file", "--batch"}, stdin: in.Bytes(),
		limit: len(paths)*(MaxFileBytes+256) + 4096})
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		return nil, gitFailure("cat-file", res)
	}
	out := make(map[string][]byte, len(paths))
	rest := res.out
	for _, p := range paths {
		header, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			break
		}
		f := strings.Fields(string(header))
		if len(f) == 0 || f[len(f)-1] == "missing" || f[len(f)-1] == "ambiguous" {
			rest = after
			continue
		}
		if len(f) != 3 {
			break
		}
		size, ok := blobSize(f[2], len(after))
		if !ok {
			break
		}
		if f[1] == "blob" && size <= MaxFileBytes { // a submodule's commit is no file
			out[p] = after[:size]
		}
		rest = after[size+1:]
	}
	return out, nil
}

// blobSize reads a cat-file size that fits in the rest of the output
// (its content and a newline).
func blobSize(s string, rest int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n+1 <= rest
}
