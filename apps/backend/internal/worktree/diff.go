package worktree

import (
	"bytes"
	"context"
	"strconv"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// MaxPatchBytes bounds the text of one file's diff (a 1 MiB file rewritten
// whole is about 2 MiB of patch); a longer patch is cut at a line end and
// marked Truncated.
const MaxPatchBytes = 2 << 20

// DiffRequest names one changed file: its Path, and for a rename the
// OldPath its Change carries (so git pairs the two sides).
type DiffRequest struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
}

// FileDiff is one file's change against the merge-base. Patch is git's
// unified diff (three lines of context), empty when the file is Binary or
// TooLarge: such a file is reported, its content never sent.
type FileDiff struct {
	Change
	MergeBase string `json:"merge_base"`
	Head      string `json:"head"` // the worktree's HEAD commit when the diff was read
	Patch     string `json:"patch,omitempty"`
	Truncated bool   `json:"truncated"` // Patch was cut at MaxPatchBytes
}

// Diff returns one file's diff. The path must be a plain relative path
// inside the worktree, not through a symlinked directory (VALIDATION_ERROR
// otherwise, naming the rule, never the path); a path with no change is
// NOT_FOUND.
func (t *Tree) Diff(ctx context.Context, req DiffRequest) (*FileDiff, error) {
	pathspec, err := t.checkPaths(req.Path, req.OldPath)
	if err != nil {
		return nil, err
	}
	mb, err := t.mergeBase(ctx)
	if err != nil {
		return nil, err
	}
	all, head, err := t.changes(ctx, mb, pathspec)
	if err != nil {
		return nil, err
	}
	var c *Change
	for i := range all {
		if all[i].Path == req.Path {
			c = &all[i]
		}
	}
	if c == nil {
		return nil, refuse(kanban.CodeNotFound, "the file has no changes against the base branch")
	}
	d := &FileDiff{Change: *c, MergeBase: mb, Head: head}
	switch {
	case c.Binary || c.TooLarge:
		return d, nil
	case c.Untracked:
		return d, t.untrackedPatch(d)
	}
	if c.OldPath == "" {
		pathspec = pathspec[:1]
	}
	args := append([]string{"diff", "--patch", "-M", "-U3", "--no-color", "--no-ext-diff", "--no-textconv", "--end-of-options", mb, "--"}, pathspec...)
	res, err := t.git(ctx, call{op: "diff", args: args, config: [][2]string{bigFileThreshold}, truncate: true, limit: MaxPatchBytes})
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		return nil, gitFailure("diff", res)
	}
	d.Patch, d.Truncated = cutPatch(res.out, res.truncated)
	return d, nil
}

// checkPaths checks a request's path (and old path) and refuses one that
// passes through a symlink; it returns the pathspec.
func (t *Tree) checkPaths(path, oldPath string) ([]string, error) {
	if err := checkPath("path", path); err != nil {
		return nil, err
	}
	spec := []string{path}
	if oldPath != "" {
		if err := checkPath("old_path", oldPath); err != nil {
			return nil, err
		}
		spec = append(spec, oldPath)
	}
	root, err := t.root()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	for _, p := range spec {
		if _, err := stat(root, p); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// untrackedPatch writes the diff git would show for a new file.
func (t *Tree) untrackedPatch(d *FileDiff) error {
	root, err := t.root()
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	fi, err := stat(root, d.Path)
	if err != nil {
		return err
	}
	if !fi.exists {
		return refuse(kanban.CodeNotFound, "the file has no changes against the base branch")
	}
	b, err := content(root, d.Path, fi)
	if err != nil {
		return err
	}
	mode := "100644"
	switch {
	case fi.symlink:
		mode = "120000"
	case fi.exec:
		mode = "100755"
	}
	var p bytes.Buffer
	p.WriteString("diff --git a/" + d.Path + " b/" + d.Path + "\nnew file mode " + mode + "\n")
	if len(b) > 0 {
		p.WriteString("--- /dev/null\n+++ b/" + d.Path + "\n@@ -0,0 +1")
		if n := countLines(b); n != 1 {
			p.WriteString("," + strconv.Itoa(n))
		}
		p.WriteString(" @@\n")
		for line := range bytes.Lines(b) {
			p.WriteByte('+')
			p.Write(line)
		}
		if b[len(b)-1] != '\n' {
			p.WriteString("\n\\ No newline at end of file\n")
		}
	}
	d.Patch, d.Truncated = cutPatch(p.Bytes(), p.Len() > MaxPatchBytes)
	return nil
}

// cutPatch bounds a patch to MaxPatchBytes, cut after a whole line.
func cutPatch(b []byte, truncated bool) (string, bool) {
	if len(b) > MaxPatchBytes {
		b, truncated = b[:MaxPatchBytes], true
	}
	if truncated {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		}
	}
	return string(b), truncated
}
