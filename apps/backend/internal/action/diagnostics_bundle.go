package action

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Bounds of a bundle's content and of what bundles keep on disk.
const (
	maxBundleBytes = 8 << 20 // every entry together, uncompressed
	maxBundleEntry = 2 << 20 // one entry
	// minLogTail is the least of a text entry kept when the bundle is
	// nearly full; with less room it is left out.
	minLogTail = 64 << 10
	// bundlesKept is how many bundles a workspace keeps: writing one
	// removes the oldest beyond it.
	bundlesKept = 10
	// DiagnosticsDir is where bundles go, relative to the workspace.
	DiagnosticsDir = ".kandev/diagnostics"
	bundlePrefix   = "kandev-diagnostics-"
)

// bundle is a bundle being assembled: its entries, redacted and bounded.
type bundle struct {
	created time.Time
	version string
	call    DiagnosticCall
	data    [][]byte      // the entries' content
	entries []BundleEntry // their names and sizes, in the same order
	omitted []string
	total   int
}

// collect builds, redacts (with red) and bounds the entries of folders,
// in order. An entry that fails or comes back empty is left out, and the
// bundle says so; the error's detail goes to the log only.
func (s *Service) collect(ctx context.Context, cfg Diagnostics, call DiagnosticCall, folders []string, red *redact.Redactor) *bundle {
	b := &bundle{created: time.Now().UTC(), version: cfg.Version, call: call}
	entries := append(s.ownEntries(cfg.Version), cfg.Entries...)
	for _, folder := range folders {
		for _, e := range entries {
			if !strings.HasPrefix(e.Name, folder+"/") {
				continue
			}
			if ctx.Err() != nil {
				b.omit(e.Name, "the bundle's time ran out")
				continue
			}
			data, err := e.Build(ctx, call)
			if err != nil {
				ref := kanban.NewID()[:8]
				s.log.WarnContext(ctx, "diagnostic bundle entry failed", "entry", e.Name, "err", err, "ref", ref)
				b.omit(e.Name, "could not be collected (ref "+ref+")")
				continue
			}
			if len(data) == 0 {
				b.omit(e.Name, "nothing to include")
				continue
			}
			b.add(e.Name, red.Bytes(data))
		}
	}
	return b
}

func (b *bundle) omit(name, why string) { b.omitted = append(b.omitted, name+": "+why) }

// add stores an entry within the bounds: a text entry too large keeps its
// end (whole lines); any other is left out.
func (b *bundle) add(name string, data []byte) {
	room := min(maxBundleEntry, maxBundleBytes-b.total)
	truncated := false
	if len(data) > room {
		if !strings.HasSuffix(name, ".txt") || room < minLogTail {
			b.omit(name, fmt.Sprintf("larger than the %d KiB left in the bundle", room>>10))
			return
		}
		data = data[len(data)-room:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
			data = data[i+1:]
		}
		truncated = true
	}
	b.data = append(b.data, data)
	b.entries = append(b.entries, BundleEntry{Name: name, Bytes: len(data), Truncated: truncated})
	b.total += len(data)
}

// manifest is the bundle's manifest.json.
func (b *bundle) manifest(source string) ([]byte, error) {
	return indentJSON(map[string]any{
		"kandev": b.version, "created_at": b.created, "source": source, "task_id": b.call.Task.ID,
		"caller_session": b.call.SessionID, "entries": b.entries, "omitted": b.omitted,
		"redaction": "Never included: tokens, environment values, MCP header and environment values, task titles, " +
			"prompts and conversations. Known secret values and credential-shaped text (authorization and bearer " +
			"values, secret-named keys, long hex runs) are replaced by " + redact.Mark + ".",
	})
}

// zip encodes the bundle: manifest.json first, then the entries.
func (b *bundle) zip(source string) ([]byte, error) {
	man, err := b.manifest(source)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: b.created})
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	if err := add("manifest.json", man); err != nil {
		return nil, err
	}
	for i, e := range b.entries {
		if err := add(e.Name, b.data[i]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	b.entries = append([]BundleEntry{{Name: "manifest.json", Bytes: len(man)}}, b.entries...)
	return buf.Bytes(), nil
}

// write stores the bundle in the workspace dir under DiagnosticsDir.
func (b *bundle) write(dir fsguard.Dir, source string) (*DiagnosticBundleOut, error) {
	data, err := b.zip(source)
	if err != nil {
		return nil, fmt.Errorf("encode diagnostic bundle: %w", err)
	}
	rel, err := writeBundle(dir, b.created, data)
	if err != nil {
		return nil, err
	}
	return &DiagnosticBundleOut{Path: rel, AbsolutePath: filepath.Join(dir.Path, filepath.FromSlash(rel)), Bytes: int64(len(data)),
		Source: source, CreatedAt: b.created, Entries: b.entries, Omitted: b.omitted}, nil
}

// writeBundle writes data as a new file in dir's DiagnosticsDir, named
// after created (with a -2, -3… suffix when taken: a bundle never replaces
// another), and returns its slash-separated path relative to dir. Every
// step stays inside dir (os.Root, opened only while dir is still the
// directory its check accepted): a link out of the workspace is refused.
func writeBundle(dir fsguard.Dir, created time.Time, data []byte) (string, error) {
	root, err := dir.OpenRoot()
	if err != nil {
		return "", err
	}
	defer func() { _ = root.Close() }()
	blocked := kanban.Errorf(kanban.CodeConflict, "the workspace's %s cannot be created or leaves the workspace", DiagnosticsDir)
	if err := root.MkdirAll(DiagnosticsDir, 0o700); err != nil {
		return "", blocked
	}
	d, err := root.OpenRoot(DiagnosticsDir)
	if err != nil {
		return "", blocked
	}
	defer func() { _ = d.Close() }()
	// Bundles stay out of the task's commits.
	if f, err := d.OpenFile(".gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, _ = f.WriteString("*\n")
		_ = f.Close()
	}
	base := bundlePrefix + created.UTC().Format("20060102T150405Z")
	for n := 1; n <= 100; n++ {
		name := base + ".zip"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.zip", base, n)
		}
		f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", blocked
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = d.Remove(name)
			return "", fmt.Errorf("write diagnostic bundle: %w", err)
		}
		pruneBundles(d, name)
		return path.Join(DiagnosticsDir, name), nil
	}
	return "", kanban.Errorf(kanban.CodeConflict, "too many diagnostic bundles were written this second; retry")
}

// pruneBundles removes the oldest bundles of d beyond bundlesKept, never
// the one just written.
func pruneBundles(d *os.Root, keep string) {
	f, err := d.Open(".")
	if err != nil {
		return
	}
	list, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return
	}
	type bundleFile struct {
		name string
		mod  time.Time
	}
	var files []bundleFile
	for _, e := range list {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), bundlePrefix) || !strings.HasSuffix(e.Name(), ".zip") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, bundleFile{e.Name(), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b bundleFile) int {
		if c := a.mod.Compare(b.mod); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for i := 0; i < len(files)-bundlesKept; i++ {
		if files[i].name != keep {
			_ = d.Remove(files[i].name)
		}
	}
}
