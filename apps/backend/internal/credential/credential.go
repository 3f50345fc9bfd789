// Package credential loads the server-side secrets Kandev uses to talk to
// forges and git remotes (a forge token today) and keeps them out of text:
// a Token formats as "[redacted]" under every fmt verb and in JSON, so a
// token that reaches a log line or an error by mistake shows nothing.
//
// A token comes only from the server's side: an environment variable of
// the backend or a secret file, both named in server configuration. It is
// never taken from a request payload.
//
// It imports only the standard library.
package credential

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// MaxTokenLen bounds a token (GitHub and GitLab tokens are well under 300
// bytes; a JWT-style token can be a few KiB).
const MaxTokenLen = 8 << 10

// maxFileLen bounds a secret file (the token, a newline, perhaps a comment).
const maxFileLen = 16 << 10

// Source names where a token lives: exactly one of Env (the name of an
// environment variable of the backend) or File (the path of a secret file
// whose first line is the token). It is server configuration, never a
// caller's choice.
type Source struct {
	Env  string `json:"token_env,omitempty"`
	File string `json:"token_file,omitempty"`
}

// Validate reports whether the source names exactly one place. Its errors
// name the configuration keys, never their values.
func (s Source) Validate() error {
	switch {
	case s.Env == "" && s.File == "":
		return errors.New("a token source needs token_env or token_file")
	case s.Env != "" && s.File != "":
		return errors.New("a token source takes token_env or token_file, not both")
	case s.Env != "" && !envName(s.Env):
		return errors.New("token_env must be an environment variable name (letters, digits, underscore)")
	}
	return nil
}

// Load reads the token now (a rotated secret file is picked up on the next
// Load). Errors say what is wrong with the source, never the token or the
// file's contents.
func (s Source) Load() (Token, error) {
	if err := s.Validate(); err != nil {
		return Token{}, err
	}
	var raw string
	if s.Env != "" {
		v, ok := os.LookupEnv(s.Env)
		if !ok || v == "" {
			return Token{}, errors.New("the token environment variable named in token_env is not set")
		}
		raw = v
	} else {
		v, err := readSecretFile(s.File)
		if err != nil {
			return Token{}, err
		}
		raw = v
	}
	return Parse(raw)
}

// Parse makes a Token of text from a trusted source: surrounding white
// space is trimmed; a token must be printable ASCII without spaces (it is
// sent in an HTTP header, so it can never inject one).
func Parse(raw string) (Token, error) {
	v := strings.TrimSpace(raw)
	switch {
	case v == "":
		return Token{}, errors.New("the token is empty")
	case len(v) > MaxTokenLen:
		return Token{}, fmt.Errorf("the token is longer than %d bytes", MaxTokenLen)
	}
	for i := range len(v) {
		if c := v[i]; c <= ' ' || c >= 0x7f {
			return Token{}, errors.New("the token must be printable ASCII without spaces")
		}
	}
	return Token{v: v}, nil
}

func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", errors.New("the secret file named in token_file cannot be opened")
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", errors.New("the secret file named in token_file is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileLen+1))
	if err != nil {
		return "", errors.New("the secret file named in token_file cannot be read")
	}
	if len(b) > maxFileLen {
		return "", fmt.Errorf("the secret file named in token_file is larger than %d bytes", maxFileLen)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line, nil
}

func envName(s string) bool {
	for i, r := range s {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return s != ""
}

// Token is a secret. Its zero value is "no token". It never formats as
// its value: use Reveal at the one place the value is sent.
type Token struct{ v string }

// Reveal returns the secret value, for the one call that sends it.
func (t Token) Reveal() string { return t.v }

// IsZero reports whether the token is absent.
func (t Token) IsZero() bool { return t.v == "" }

// String returns "[redacted]" (or "" for no token), so %v and %s hide it.
func (t Token) String() string {
	if t.v == "" {
		return ""
	}
	return "[redacted]"
}

// GoString hides the value from %#v too.
func (t Token) GoString() string { return "credential.Token{" + t.String() + "}" }

// Format hides the value under every verb (%q, %x, %d included).
func (t Token) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, t.String()) }

// MarshalJSON hides the value from JSON.
func (t Token) MarshalJSON() ([]byte, error) { return []byte(`"` + t.String() + `"`), nil }

// Cached loads a source as Load does, for a caller that needs the token
// on every request (a webhook's secret): a secret file is read again only
// when it changed (another file, size or modification time — an operator
// rotating it needs no restart), an environment variable is looked up on
// every call. A load that fails is not cached: the next call tries again.
type Cached struct {
	src Source
	mu  sync.Mutex
	fi  os.FileInfo // the file the token was read from
	tok Token
}

// NewCached returns the cached loader of src.
func NewCached(src Source) *Cached { return &Cached{src: src} }

// Load returns the source's current token.
func (c *Cached) Load() (Token, error) {
	if c.src.File == "" {
		return c.src.Load()
	}
	fi, err := os.Stat(c.src.File)
	if err != nil {
		return Token{}, errors.New("the secret file named in token_file cannot be opened")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fi != nil && os.SameFile(c.fi, fi) && fi.Size() == c.fi.Size() && fi.ModTime().Equal(c.fi.ModTime()) {
		return c.tok, nil
	}
	tok, err := c.src.Load()
	if err != nil {
		return Token{}, err
	}
	c.fi, c.tok = fi, tok
	return tok, nil
}
