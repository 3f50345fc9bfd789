package app

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/board"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// noRedirect is an HTTP client that shows redirects instead of following.
var noRedirect = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// boardRes is a response read whole (its body closed).
type boardRes struct {
	StatusCode int
	Header     http.Header
	cookies    []*http.Cookie
	Body       string
}

func (r *boardRes) Cookies() []*http.Cookie { return r.cookies }

func boardReq(t *testing.T, method, u, origin, cookie, body string) *boardRes {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return &boardRes{StatusCode: res.StatusCode, Header: res.Header, cookies: res.Cookies(), Body: string(b)}
}

// boardCookie signs in over HTTP and returns the Cookie header value.
func boardCookie(t *testing.T, e *env) string {
	t.Helper()
	res := boardReq(t, "POST", e.url+"/auth/sign-in", e.url, "", "token="+url.QueryEscape(e.token))
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("sign-in: got %d with %d cookies, want 303 and one cookie", res.StatusCode, len(res.Cookies()))
	}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie: got %+v, want HttpOnly, SameSite=Strict, Path=/", c)
	}
	return c.Name + "=" + c.Value
}

// dialBoard upgrades /ws with an Origin and a Cookie; it returns the
// HTTP status of a refused upgrade.
func dialBoard(e *env, origin, cookie string) (*websocket.Conn, int, error) {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if cookie != "" {
		h.Set("Cookie", cookie)
	}
	c, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.url, "http")+"/ws", h)
	status := 0
	if res != nil {
		status = res.StatusCode
		_ = res.Body.Close()
	}
	return c, status, err
}

// checkBoardWithoutCookie: without the cookie, only the sign-in page and
// its stylesheet answer, with the CSP and its companions, and no upgrade
// is accepted.
func checkBoardWithoutCookie(t *testing.T, e *env) {
	t.Helper()
	paths := []string{"/app/main.js", "/app/api.js", "/app/board.js", "/app/task.js", "/app/md.js", "/app/config.js", "/app/questions.js"}
	for _, p := range paths {
		if res := boardReq(t, "GET", e.url+p, "", "", ""); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the cookie: got %d, want 401", p, res.StatusCode)
		}
	}
	res := boardReq(t, "GET", e.url+"/", "", "", "")
	if res.Header.Get("Content-Security-Policy") != board.CSP || res.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers of /: got %v", res.Header)
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, `name="token"`) {
		t.Fatalf("GET / without the cookie: got %d, want the sign-in page", res.StatusCode)
	}
	if res := boardReq(t, "GET", e.url+"/public/style.css", "", "", ""); res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("the sign-in stylesheet: got %d", res.StatusCode)
	}
	if _, status, err := dialBoard(e, e.url, ""); err == nil || status != http.StatusUnauthorized {
		t.Fatalf("upgrade without cookie or token: got %v, want 401", err)
	}
}

// TestBoardSecurity: nothing of the board but its sign-in page answers
// without the cookie; every response has the CSP and its companions;
// cross-origin posts and upgrades are refused even with a valid cookie;
// signing out revokes the cookie and closes its connections.
func TestBoardSecurity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	checkBoardWithoutCookie(t, e)

	// Sign-in: a wrong token, a cross-origin or origin-less post set no cookie.
	for _, c := range []struct{ origin, token string }{{e.url, "wrong"}, {"http://localhost:1", e.token}, {"", e.token}, {"null", e.token}} {
		res := boardReq(t, "POST", e.url+"/auth/sign-in", c.origin, "", "token="+url.QueryEscape(c.token))
		if res.StatusCode == http.StatusSeeOther || len(res.Cookies()) != 0 {
			t.Errorf("sign-in from %q with %q: got %d and %d cookies, want a refusal", c.origin, c.token, res.StatusCode, len(res.Cookies()))
		}
	}
	cookie := boardCookie(t, e)
	if res := boardReq(t, "GET", e.url+"/app/main.js", "", cookie, ""); res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("asset with the cookie: got %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	// A cross-origin upgrade with a valid cookie, another port of this host
	// included, is refused; so is one with no Origin.
	for _, origin := range []string{"http://localhost:9", "http://127.0.0.1:9", "http://evil.example", ""} {
		if _, status, err := dialBoard(e, origin, cookie); err == nil || status/100 != 4 {
			t.Errorf("upgrade from %q with the cookie: got %v, want a 4xx refusal", origin, err)
		}
	}
	conn, _, err := dialBoard(e, e.url, cookie)
	if err != nil {
		t.Fatalf("same-origin upgrade with the cookie: %v", err)
	}
	defer func() { _ = conn.Close() }()
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "request", "action": kanban.ActionWorkspaceList, "payload": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var reply struct{ Type string }
	if err := conn.ReadJSON(&reply); err != nil || reply.Type != "response" {
		t.Fatalf("request over the board's connection: got %+v %v", reply, err)
	}
	// A cross-origin sign-out is refused and changes nothing.
	if res := boardReq(t, "POST", e.url+"/auth/sign-out", "http://localhost:9", cookie, ""); res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-out: got %d, want 403", res.StatusCode)
	}
	if res := boardReq(t, "GET", e.url+"/app/main.js", "", cookie, ""); res.StatusCode != http.StatusOK {
		t.Fatal("a refused sign-out ended the session")
	}
	if res := boardReq(t, "POST", e.url+"/auth/sign-out", e.url, cookie, ""); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: got %d, want 303", res.StatusCode)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := conn.ReadMessage(); err == nil {
		t.Fatal("the board connection stayed open after signing out")
	}
	if res := boardReq(t, "GET", e.url+"/app/main.js", "", cookie, ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked cookie: got %d, want 401", res.StatusCode)
	}
	if _, status, err := dialBoard(e, e.url, cookie); err == nil || status != http.StatusUnauthorized {
		t.Fatalf("upgrade with a revoked cookie: got %v, want 401", err)
	}
	// Bearer clients are unaffected by the board's rules.
	bearerConn, up, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.url, "http")+"/ws", http.Header{"Authorization": {"Bearer " + e.token}})
	if up != nil {
		_ = up.Body.Close()
	}
	if err != nil {
		t.Fatalf("bearer upgrade: %v", err)
	}
	_ = bearerConn.Close()
}
