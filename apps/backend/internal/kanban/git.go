package kanban

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The two kinds of git text a payload may carry — a branch name and a
// repository's remote URL — are checked here once, by the contracts'
// Check methods, the actions that write several things at once (before the
// first write) and the store. Refusals name the rule, never the value.

// maxHostLen bounds a DNS name (RFC 1035).
const maxHostLen = 253

// branchPunct are the punctuation characters a branch name may use besides
// letters and digits.
const branchPunct = "-_./+#@,"

// CheckBranch refuses a branch name that `git check-ref-format --branch`
// refuses, and more: the name must be at most MaxBranchLen bytes of
// letters, digits and - _ . / + # @ , only, must not start with "-" (it
// would read as an option), and must not contain "..", "@{", "//", a
// component starting with "." or ending with ".lock", nor end with "/" or
// ".". "HEAD" and "@" are refused as git refuses them. An empty name is
// left to the caller (optional fields mean "the default").
func CheckBranch(field, name string) error {
	if name == "" {
		return nil
	}
	bad := func(why string) error { return FieldError(field, "must be a git branch name: %s", why) }
	switch {
	case !utf8.ValidString(name):
		return FieldError(field, "must be valid UTF-8")
	case len(name) > MaxBranchLen:
		return bad("too long (at most " + strconv.Itoa(MaxBranchLen) + " bytes)")
	case name[0] == '-':
		return bad(`it must not start with "-"`)
	case name == "HEAD" || name == "@":
		return bad(`"HEAD" and "@" are reserved`)
	case strings.Contains(name, ".."):
		return bad(`it must not contain ".."`)
	case strings.Contains(name, "@{"):
		return bad(`it must not contain "@{"`)
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return bad(`it must not end with "/" or "."`)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && !strings.ContainsRune(branchPunct, r) {
			return bad("only letters, digits and " + strings.Join(strings.Split(branchPunct, ""), " ") + " are allowed (no spaces, control characters or ~^:?*[\\)")
		}
	}
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "":
			return bad(`it must not start with "/" or contain "//"`)
		case part[0] == '.':
			return bad(`no part may start with "."`)
		case strings.HasSuffix(part, ".lock"):
			return bad(`no part may end with ".lock"`)
		}
	}
	return nil
}

// CheckRemoteURL refuses a repository remote URL that is not one of:
// https://host/path; http://host/path for a loopback host only;
// ssh://[user@]host[:port]/path; the scp-like [user@]host:path. Refused in
// particular: git's transport helpers (ext::, fd::, any "<name>::"), file://
// and local paths (a local repository is registered by its local_path,
// which is confined to the operator's source roots), a leading "-",
// whitespace and control characters, credentials in an http(s) URL and a
// password anywhere. An empty URL is left to the caller.
func CheckRemoteURL(field, raw string) error {
	if raw == "" {
		return nil
	}
	bad := func(why string) error { return FieldError(field, "must be a remote repository URL: %s", why) }
	switch {
	case !utf8.ValidString(raw):
		return FieldError(field, "must be valid UTF-8")
	case len(raw) > MaxURLLen:
		return bad("too long (at most " + strconv.Itoa(MaxURLLen) + " bytes)")
	case raw[0] == '-':
		return bad(`it must not start with "-"`)
	case strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		return bad("no spaces or control characters")
	case transportHelper(raw):
		return bad(`git transport helpers ("ext::", "fd::", "<name>::") are refused`)
	}
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		return checkSCPLike(raw, bad)
	}
	switch strings.ToLower(scheme) {
	case "https", "http", "ssh":
	case "file":
		return bad("file:// is refused: register a local repository by its local_path")
	default:
		return bad("use https://, ssh://, user@host:path, or http:// to a loopback host")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" || rest == "" {
		return bad("it does not parse as scheme://host/path")
	}
	if _, hasPass := u.User.Password(); hasPass {
		return bad("no password in the URL (use a credential helper or an SSH key)")
	}
	if u.User != nil && strings.HasPrefix(u.User.Username(), "-") {
		return bad(`the user name must not start with "-"`)
	}
	host := u.Hostname()
	if !validHost(host) {
		return bad("the host is not a valid host name or IP address")
	}
	if p := u.Port(); p != "" && strings.Trim(p, "0123456789") != "" {
		return bad("the port must be a number")
	}
	switch strings.ToLower(scheme) {
	case "http":
		if !loopbackHost(host) {
			return bad("http:// is accepted for loopback hosts only; use https://")
		}
		fallthrough
	case "https":
		if u.User != nil {
			return bad("no credentials in an http(s) URL (use a credential helper)")
		}
	}
	return nil
}

// transportHelper reports whether git would read s as "<helper>::<address>"
// (its rule: scheme characters, then "::").
func transportHelper(s string) bool {
	i := strings.Index(s, "::")
	if i <= 0 {
		return false
	}
	return strings.IndexFunc(s[:i], func(r rune) bool { return !asciiAlnum(r) && !strings.ContainsRune("+.-", r) }) < 0
}

// asciiAlnum reports whether r is an ASCII letter or digit.
func asciiAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// checkSCPLike accepts [user@]host:path where host is a host name or a
// bracketed IP address and path does not start with "-" or ":".
func checkSCPLike(s string, bad func(string) error) error {
	// A ":" before the first "@" is refused below: credential-shaped
	// (user:password@host) whatever git would make of it.
	user, hostPath, hasUser := strings.Cut(s, "@")
	if !hasUser {
		hostPath, user = s, ""
	}
	host, path, ok := strings.Cut(hostPath, ":")
	if strings.HasPrefix(hostPath, "[") {
		end := strings.Index(hostPath, "]:")
		if end < 0 {
			return bad("use https://, ssh://, user@host:path, or http:// to a loopback host")
		}
		host, path, ok = hostPath[1:end], hostPath[end+2:], true
	}
	switch {
	case !ok || strings.Contains(host, "/"):
		return bad("use https://, ssh://, user@host:path, or http:// to a loopback host (local paths and file:// are refused: register a local repository by its local_path)")
	case hasUser && !validUser(user):
		return bad("the user name is not valid (and no password in the URL)")
	case !validHost(host) || strings.EqualFold(host, "file"):
		return bad("the host is not a valid host name or IP address")
	case path == "" || path[0] == '-' || path[0] == ':':
		return bad(`the path must not be empty or start with "-" or ":"`)
	}
	return nil
}

// validUser accepts a user name of letters, digits and "._-" that starts
// with a letter, a digit or "_" (so never an option or a relative path).
func validUser(u string) bool {
	if u == "" || len(u) > maxHostLen || (!asciiAlnum(rune(u[0])) && u[0] != '_') {
		return false
	}
	return strings.IndexFunc(u, func(r rune) bool { return !asciiAlnum(r) && !strings.ContainsRune("._-", r) }) < 0
}

// validHost accepts an IP address or a DNS name of letters, digits, "-"
// and "." (no label starting with "-").
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > maxHostLen {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || label[0] == '-' || strings.IndexFunc(label, func(r rune) bool {
			return !asciiAlnum(r) && r != '-' && r != '_'
		}) >= 0 {
			return false
		}
	}
	return true
}

// loopbackHost reports whether h is localhost or a loopback address.
func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
