package board

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

//go:embed pages
var pagesFS embed.FS

// Defaults of Config.
const (
	DefaultSessionTTL  = 12 * time.Hour
	DefaultMaxSessions = 64
	// maxFormBytes bounds a sign-in or sign-out request body.
	maxFormBytes = 4 << 10
)

// Config configures a Board.
type Config struct {
	// Operator reports whether a token is the operator token; it must
	// compare in constant time. Required.
	Operator func(token string) bool
	// OnEnd, if set, is called (outside any lock) with the id of every
	// board session that ends: sign-out, expiry, or eviction when
	// MaxSessions are signed in. The application closes the session's
	// WebSocket connections.
	OnEnd func(id string)
	// SessionTTL bounds a session's life from sign-in (default 12h).
	SessionTTL time.Duration
	// MaxSessions bounds the signed-in sessions (default 64).
	MaxSessions int
	Logger      *slog.Logger
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// Board is the board's HTTP handler: pages, assets, sign-in and sign-out.
type Board struct {
	cfg      Config
	sessions *sessions
	assets   map[string]*asset
	index    []byte
	signin   *template.Template
}

// New builds a Board from the embedded files.
func New(cfg Config) (*Board, error) {
	if cfg.Operator == nil {
		return nil, fmt.Errorf("board: Config.Operator is required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	assets, err := loadAssets()
	if err != nil {
		return nil, fmt.Errorf("board assets: %w", err)
	}
	index, err := pagesFS.ReadFile("pages/index.html")
	if err != nil {
		return nil, fmt.Errorf("board page: %w", err)
	}
	signin, err := template.ParseFS(pagesFS, "pages/signin.html")
	if err != nil {
		return nil, fmt.Errorf("board sign-in page: %w", err)
	}
	return &Board{cfg: cfg, sessions: newSessions(cfg.MaxSessions, cfg.SessionTTL, cfg.Now),
		assets: assets, index: index, signin: signin}, nil
}

// ServeHTTP serves every board path. Everything but the sign-in page, its
// stylesheet and icon needs a live session cookie.
func (b *Board) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	switch {
	case r.URL.Path == "/auth/sign-in":
		b.signIn(w, r)
	case r.URL.Path == "/auth/sign-out":
		b.signOut(w, r)
	case r.URL.Path != "/" && b.assets[r.URL.Path] == nil:
		http.NotFound(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case r.URL.Path == "/":
		if _, ok := b.Session(r); !ok {
			b.renderSignIn(w, http.StatusOK, "")
			return
		}
		page(w)
		_, _ = w.Write(b.index)
	default:
		a := b.assets[r.URL.Path]
		if _, signed := b.Session(r); !a.public && !signed {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		a.serve(w, r)
	}
}

// Session returns the id of the live board session whose cookie r carries.
// It checks only the cookie; state-changing requests also need SameOrigin.
func (b *Board) Session(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieName(r))
	if err != nil {
		return "", false
	}
	e, ok := b.sessions.lookup(c.Value)
	if !ok {
		return "", false
	}
	return e.id, true
}

// HasCookie reports whether r carries a board cookie at all (live or not).
func (b *Board) HasCookie(r *http.Request) bool {
	_, err := r.Cookie(cookieName(r))
	return err == nil
}

// Live reports whether a board session is still signed in; the application
// re-checks it on every WebSocket request.
func (b *Board) Live(id string) bool { return b.sessions.live(id) }

// Sweep ends expired sessions (calling OnEnd for each).
func (b *Board) Sweep() { b.ended(b.sessions.sweep()) }

func (b *Board) ended(ids []string) {
	if b.cfg.OnEnd == nil {
		return
	}
	for _, id := range ids {
		b.cfg.OnEnd(id)
	}
}

// signInRefused is the sign-in page's answer to a wrong token. It names
// the command as a fresh checkout has it (make run puts no kandev on
// PATH), not a path of this server: the page is shown before sign-in.
const signInRefused = "That is not the operator token. To print it, run apps/backend/bin/kandev token in your Kandev checkout (or the command kandev serve's start-up lines name)."

func (b *Board) signIn(w http.ResponseWriter, r *http.Request) {
	if !boardPost(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		b.renderSignIn(w, http.StatusBadRequest, "The sign-in form could not be read. Paste the token and try again.")
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if !b.cfg.Operator(tok) {
		b.cfg.Logger.Info("board sign-in refused")
		b.renderSignIn(w, http.StatusUnauthorized, signInRefused)
		return
	}
	value, e, ended := b.sessions.issue()
	b.ended(ended)
	//nolint:gosec // G124: Secure is set whenever the board is served over TLS; a loopback HTTP board cannot use it.
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: value, Path: "/", Expires: e.expires,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	b.cfg.Logger.Info("board sign-in", slog.String("board_session", e.id))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (b *Board) signOut(w http.ResponseWriter, r *http.Request) {
	if !boardPost(w, r) {
		return
	}
	c, err := r.Cookie(cookieName(r))
	if err != nil {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	if id, ok := b.sessions.revoke(c.Value); ok {
		b.ended([]string{id})
	}
	//nolint:gosec // G124: as at sign-in.
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (b *Board) renderSignIn(w http.ResponseWriter, status int, msg string) {
	var buf bytes.Buffer
	if err := b.signin.Execute(&buf, struct{ Error string }{msg}); err != nil {
		b.cfg.Logger.Error("render sign-in page", slog.String("error", err.Error()))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	page(w)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// boardPost admits a POST from the board's own origin, and answers
// anything else (405, or 403 for another origin).
func boardPost(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	if !SameOrigin(r) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return false
	}
	return true
}

// SameOrigin reports whether r's Origin header is present and names
// exactly the origin r was sent to (scheme, host and port). Browsers send
// Origin on every POST and WebSocket upgrade; a request without one, or
// from another origin (another port of localhost included), is refused.
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return origin != "" && strings.EqualFold(origin, scheme+r.Host)
}

// cookieName is per port: browsers share cookies between the ports of one
// host, so two backends on one machine must not overwrite each other's.
func cookieName(r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
		return "kandev_board"
	}
	return "kandev_board_" + port
}

// page sets the headers of an HTML page: never cached (it depends on the
// cookie), HTML.
func page(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
}

// CSP is the Content-Security-Policy of every board response: scripts,
// styles and connections only from the page's own origin, no inline
// script or style, no plugins, no framing, forms only to the page itself.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; " +
	"frame-ancestors 'none'"

// secure sets the security headers of every board response.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer browsers send "Origin: null"
	// on form posts, and the origin check needs the real one.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}
