package worktree

import (
	"context"
	"encoding/base64"
	"net"
	"net/url"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// AuthScheme is how a token is presented to a git remote over HTTP.
type AuthScheme string

// Auth schemes. Basic is what forges take for git over HTTPS (GitHub:
// user "x-access-token"; GitLab: "oauth2"); Bearer suits servers that
// take OAuth-style bearer tokens for git.
const (
	AuthBasic  AuthScheme = "basic"
	AuthBearer AuthScheme = "bearer"
)

// DefaultUsername is the Basic user name when Auth.Username is empty
// (GitHub's; any non-empty name works for GitHub and GitLab tokens).
const DefaultUsername = "x-access-token"

// Remote is where the task branch is pushed: the repository's configured
// remote URL (from server configuration or the repository's record, never
// a caller's) and the server-side token for it.
type Remote struct {
	URL  string
	Auth Auth
}

// Auth is the credential of a push. A zero Token pushes without one.
type Auth struct {
	Scheme   AuthScheme // AuthBasic when empty
	Username string     // Basic only; DefaultUsername when empty
	Token    credential.Token
}

// PushResult is what a push did to the remote branch.
type PushResult struct {
	Branch string `json:"branch"`
	SHA    string `json:"sha"`    // the commit the remote branch now names
	Status string `json:"status"` // "created", "updated" or "up_to_date"
}

// Push pushes the task branch (refs/heads/Branch, to the same name) to
// remote, never forced. The token reaches git only through its
// environment (an http.<url>.extraHeader scoped to the remote URL, through
// GIT_CONFIG_COUNT): never argv, never a URL, never a file. Git's output
// is redacted of it and kept in Detail only. Refusals: VALIDATION_ERROR
// (a URL that is not https, or http to loopback), FORBIDDEN (the
// repository's config rewrites the URL), UNAUTHORIZED (the remote refused
// the credentials), CONFLICT (non-fast-forward, or the remote rejected the
// ref), UNAVAILABLE (the remote could not be reached, or took too long).
func (t *Tree) Push(ctx context.Context, remote Remote) (*PushResult, error) {
	u, err := checkRemoteURL(remote.URL)
	if err != nil {
		return nil, err
	}
	header, r, err := authHeader(remote.Auth)
	if err != nil {
		return nil, err
	}
	if err := t.refuseURLRewrite(ctx, u); err != nil {
		return nil, err
	}
	sha, err := t.resolve(ctx, t.headRef)
	if err != nil {
		return nil, err
	}
	scope := "http." + u + "."
	config := [][2]string{{"http.followRedirects", "false"}, {scope + "extraHeader", ""}}
	if header != "" {
		config = append(config, [2]string{scope + "extraHeader", header})
	}
	refspec := t.headRef + ":" + t.headRef
	res, err := t.git(ctx, call{op: "push", args: []string{"push", "--porcelain", "--no-verify", "--end-of-options", u, refspec},
		config: config, timeout: t.g.pushTimeout, redact: r})
	if err != nil {
		return nil, err
	}
	line := pushLine(string(res.out), refspec)
	detail := res.stderr + redactText(r, string(res.out))
	out := &PushResult{Branch: t.branch, SHA: sha}
	switch {
	case res.exit == 0 && strings.HasPrefix(line, "*"):
		out.Status = "created"
	case res.exit == 0 && strings.HasPrefix(line, "="):
		out.Status = "up_to_date"
	case res.exit == 0 && line != "":
		out.Status = "updated"
	default:
		return nil, pushFailure(line, res.stderr, detail)
	}
	return out, nil
}

// pushFailure maps a failed push to a safe error.
func pushFailure(line, stderr, detail string) *Error {
	switch {
	case strings.Contains(line, "non-fast-forward") || strings.Contains(line, "fetch first"):
		return failed(kanban.CodeConflict, "the remote branch has commits the task branch does not (non-fast-forward); nothing was pushed", detail)
	case strings.HasPrefix(line, "!"):
		return failed(kanban.CodeConflict, "the remote rejected the task branch", detail)
	case containsAny(stderr, "Authentication failed", "could not read Username", "could not read Password", "terminal prompts disabled",
		"returned error: 401", "returned error: 403", "Invalid username or password"):
		return failed(kanban.CodeUnauthorized, "the remote refused the server's credentials for this repository", detail)
	case containsAny(stderr, "Could not resolve host", "Failed to connect", "Connection refused", "Connection timed out", "Operation timed out"):
		return failed(kanban.CodeUnavailable, "the remote could not be reached", detail)
	case containsAny(stderr, "returned error: 404", "not found", "does not appear to be a git repository"):
		return failed(kanban.CodeNotFound, "the remote repository was not found (or the credentials cannot see it)", detail)
	case strings.Contains(stderr, "redirect"):
		return failed(kanban.CodeUnavailable, "the remote answered with a redirect, which pushes do not follow: configure its final URL", detail)
	}
	return failed(kanban.CodeInternal, "git push failed", detail)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// pushLine returns the porcelain status line of refspec ("" if none).
func pushLine(out, refspec string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 2 && f[1] == refspec {
			return line
		}
	}
	return ""
}

// authHeader returns the HTTP header that carries a's token (none for no
// token) and a redactor of every form of it.
func authHeader(a Auth) (string, *redact.Redactor, error) {
	if a.Token.IsZero() {
		return "", redact.New(), nil
	}
	tok := a.Token.Reveal()
	switch a.Scheme {
	case AuthBasic, "":
		user := a.Username
		if user == "" {
			user = DefaultUsername
		}
		if user == "" || strings.ContainsAny(user, ": \t\r\n") || len(user) > 256 {
			return "", nil, invalid("username", "must be a user name without spaces or colons")
		}
		b64 := base64.StdEncoding.EncodeToString([]byte(user + ":" + tok))
		return "Authorization: Basic " + b64, redact.New(tok, b64), nil
	case AuthBearer:
		return "Authorization: Bearer " + tok, redact.New(tok), nil
	}
	return "", nil, invalid("auth_scheme", `must be "basic" or "bearer"`)
}

// checkRemoteURL refuses a push URL that kanban.CheckRemoteURL refuses
// (transport helpers, file:// and local paths, options, control
// characters, credentials in http(s) URLs, …) and, since a push
// authenticates with a token over HTTP, any URL but https://host/path or
// http:// to a loopback host, without query or fragment. Messages never
// echo the URL.
func checkRemoteURL(raw string) (string, error) {
	if raw == "" {
		return "", invalid("remote_url", "is required")
	}
	if err := kanban.CheckRemoteURL("remote_url", raw); err != nil {
		return "", asError(err)
	}
	bad := func(why string) (string, error) {
		return "", invalid("remote_url", "a push needs an https URL ("+why+")")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return bad("scheme://host/path")
	case u.User != nil:
		return bad("no user in the URL: the token comes from server configuration")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return bad("no query or fragment")
	case strings.Trim(u.Path, "/") == "":
		return bad("a repository path")
	case u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())):
		return bad("https, or http to a loopback host only; SSH remotes take keys, not tokens")
	}
	return strings.TrimSuffix(raw, "/"), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseURLRewrite refuses a push when the repository's git configuration
// (which whatever works in the worktree can write) could send the push,
// or the token it carries, elsewhere than the configured remote: a URL
// rewrite (url.<base>.insteadOf / pushInsteadOf) to it, or an http.*
// setting other than the few that only tune transfers (a proxy, CA
// files, client certificates, pinned keys, curl's resolve list, extra
// headers, cookies: a proxy with a CA of the agent's own would read the
// token).
func (t *Tree) refuseURLRewrite(ctx context.Context, u string) error {
	res, err := t.git(ctx, call{op: "config", args: []string{"config", "-z", "--get-regexp", `^(url\..*\.(insteadof|pushinsteadof)|http\..*)$`}})
	if err != nil {
		return err
	}
	if res.exit == 1 {
		return nil // no such keys
	}
	if res.exit != 0 {
		return gitFailure("config", res)
	}
	for _, rec := range splitNUL(res.out) {
		key, value, _ := strings.Cut(rec, "\n")
		if strings.HasPrefix(key, "http.") {
			if !harmlessHTTPKey(key) {
				return refuse(kanban.CodeForbidden, "the repository's git configuration sets http options (a proxy, CA or certificate files, headers, …) that could send the push elsewhere; refusing to push")
			}
			continue
		}
		if value != "" && strings.HasPrefix(u, value) {
			return refuse(kanban.CodeForbidden, "the repository's git configuration rewrites the remote URL (url.*.insteadOf); refusing to push")
		}
	}
	return nil
}

// harmlessHTTPKeys are the http.* settings (of any URL scope) a push
// accepts from the repository's configuration: they tune the transfer
// and cannot redirect it or carry the token elsewhere (sslverify and
// followredirects are set on every push's command line, which outranks
// the repository's configuration).
var harmlessHTTPKeys = map[string]bool{"sslverify": true, "followredirects": true, "postbuffer": true, "lowspeedlimit": true, "lowspeedtime": true,
	"maxrequests": true, "minsessions": true, "version": true, "useragent": true, "receivepack": true, "uploadpack": true}

func harmlessHTTPKey(key string) bool {
	i := strings.LastIndexByte(key, '.')
	return harmlessHTTPKeys[strings.ToLower(key[i+1:])]
}

// CheckPushURL refuses a URL Push would refuse (see Push), for server
// configuration checked at start. Its errors never echo the URL.
func CheckPushURL(raw string) error {
	_, err := checkRemoteURL(raw)
	return err
}
