// Package redact removes secrets from text that people or agents will
// read: an agent's stderr, script output, diagnostic bundles. It replaces
// the values it was told are secret, and, whatever it was told, anything
// shaped like a credential: bearer and authorization values, values of
// names that say they are secret (API_KEY=…, token: …), passwords in URLs
// (scheme://user:…@host), and long runs of hex digits (Kandev's operator
// and session tokens are 64).
//
// It imports only the standard library.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mark replaces every redacted value.
const Mark = "[redacted]"

// minSecret is the shortest value redacted by value: shorter ones would
// redact ordinary words.
const minSecret = 6

// secretHints mark names (environment variables, headers, keys) whose
// values are secrets.
var secretHints = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "COOKIE", "AUTH"}

// SecretName reports whether a name (an environment variable, a header, a
// flag) says its value is a secret.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, h := range secretHints {
		if strings.Contains(up, h) {
			return true
		}
	}
	return false
}

// EnvSecrets returns the values of the KEY=VALUE entries of env whose
// names say they are secret.
func EnvSecrets(env []string) []string {
	var out []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && SecretName(k) {
			out = append(out, v)
		}
	}
	return out
}

// patterns match credentials by their shape; each keeps its first group
// (the name, or what leads to the value) and replaces the rest by Mark
// and its tail. Values stop at quotes, backslashes and separators, so
// redacting JSON or logfmt text keeps it well-formed; a quote right after
// the name or separator is kept ("token":"…").
var patterns = []struct {
	re   *regexp.Regexp
	tail string
}{
	{regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization"?\s*[:=]\s*"?)(?:(?:bearer|basic|token|digest)\s+)?[^\s"'\\,;&]+`), ""},
	{regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]+`), ""},
	{regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|credential|cookie)[A-Za-z0-9_.-]*"?\s*[:=]\s*"?)[^\s"'\\,;&]+`), ""},
	{regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s/@:"'\\]*:)[^\s/@"'\\]+@`), "@"},
	{regexp.MustCompile(`()[0-9A-Fa-f]{48,}`), ""},
}

// Redactor replaces known secret values and credential-shaped text, and
// optionally absolute paths by labels.
// Learn may add values while others redact (it is safe for concurrent
// use).
type Redactor struct {
	mu     sync.RWMutex
	values []string // longest first, so a secret containing another goes whole
	paths  []pathLabel
}

// pathLabel replaces an absolute path (and what lies under it) by a label.
type pathLabel struct{ path, label string }

// WithPaths returns a copy of r that also replaces each absolute path of
// labels (and every path under it) by its label, longest path first, so
// text shown to an agent names "<data dir>/tasks/…" instead of where the
// server keeps its files.
func (r *Redactor) WithPaths(labels map[string]string) *Redactor {
	out := &Redactor{}
	if r != nil {
		r.mu.RLock()
		out.values = slices.Clone(r.values)
		r.mu.RUnlock()
	}
	for p, l := range labels {
		if len(p) > 1 && strings.HasPrefix(p, "/") {
			out.paths = append(out.paths, pathLabel{path: strings.TrimRight(p, "/"), label: l})
		}
	}
	slices.SortFunc(out.paths, func(a, b pathLabel) int { return len(b.path) - len(a.path) })
	return out
}

// New returns a redactor for the given secret values (empty and very
// short ones are ignored).
func New(values ...string) *Redactor {
	r := &Redactor{}
	r.Learn(values...)
	return r
}

// Learn adds secret values to r (empty and very short ones are ignored):
// from now on they are redacted too.
func (r *Redactor) Learn(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) >= minSecret && !slices.Contains(r.values, v) {
			r.values = append(r.values, v)
		}
	}
	slices.SortFunc(r.values, func(a, b string) int { return len(b) - len(a) })
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	if r != nil {
		r.mu.RLock()
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Mark)
		}
		r.mu.RUnlock()
		for _, p := range r.paths {
			s = strings.ReplaceAll(s, p.path, p.label)
		}
	}
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, "${1}"+Mark+p.tail)
	}
	return s
}

// Bytes is String for a byte slice.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }
