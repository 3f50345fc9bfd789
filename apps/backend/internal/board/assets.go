package board

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed static
var staticFS embed.FS

// asset is one embedded file, with its gzip form and validator computed
// once at start.
type asset struct {
	body   []byte
	gz     []byte
	etag   string
	ctype  string
	public bool // served before sign-in (the sign-in page's stylesheet and icon)
}

// loadAssets is readAssets, once per process: the files are embedded, so
// every board of the process serves the same (read-only) map.
var loadAssets = sync.OnceValues(readAssets)

// readAssets reads every embedded file: static/public/* at /public/*,
// static/app/* at /app/*, and the two pages by name.
func readAssets() (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		rel := strings.TrimPrefix(p, "static")
		a := &asset{body: body, ctype: contentType(rel), public: strings.HasPrefix(rel, "/public/")}
		sum := sha256.Sum256(body)
		a.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: cannot fail
		_, _ = zw.Write(body)                                    // writes to a bytes.Buffer cannot fail
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compress %s: %w", p, err)
		}
		if buf.Len() < len(body) {
			a.gz = buf.Bytes()
		}
		out[rel] = a
		return nil
	})
	return out, err
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// serve writes a, compressed when the client accepts gzip, answering a
// matching If-None-Match with 304. Assets revalidate on every load
// (no-cache), so a new binary's files are picked up at once.
func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}
