package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Defaults of Config.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultPushTimeout = 2 * time.Minute
	DefaultMaxOutput   = 64 << 20 // stdout of one git command
	maxStderr          = 64 << 10
	waitDelay          = 2 * time.Second // after a kill, for pipes held by git's children
)

// Config is the server side of every worktree operation: which git, the
// identity commits are made with, and the bounds.
type Config struct {
	// GitPath is the git binary (default: "git" found on PATH).
	GitPath string
	// Home is an empty directory git gets as HOME and XDG_CONFIG_HOME, so
	// nothing of the server user's own git setup applies (default: a
	// temporary directory made by NewGit and removed by Close).
	Home string
	// Identity is the author and committer of every commit Kandev makes.
	Identity Identity
	// Timeout bounds each git command (DefaultTimeout); PushTimeout
	// bounds a push (DefaultPushTimeout).
	Timeout, PushTimeout time.Duration
	// MaxOutput bounds the standard output of one git command
	// (DefaultMaxOutput); a command that writes more is stopped.
	MaxOutput int
}

// Identity is a git author or committer.
type Identity struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Check refuses an identity git would reject or mangle.
func (id Identity) Check() error {
	if id.Name == "" || id.Email == "" {
		return errors.New("the commit identity needs a name and an email")
	}
	for _, s := range []string{id.Name, id.Email} {
		if len(s) > 256 || !utf8.ValidString(s) || strings.ContainsAny(s, "<>\n\r\x00") {
			return errors.New("the commit identity's name and email must be single-line text without < or > (at most 256 bytes)")
		}
	}
	if _, err := mail.ParseAddress(id.Email); err != nil {
		return errors.New("the commit identity's email is not an email address")
	}
	return nil
}

// Git runs git for worktree operations; one serves every task.
type Git struct {
	path        string
	home        string
	ownHome     bool
	identity    Identity
	timeout     time.Duration
	pushTimeout time.Duration
	maxOutput   int
}

// NewGit checks cfg and finds git. A set Identity must pass Check; an
// unset one leaves Commit refused.
func NewGit(cfg Config) (*Git, error) {
	g := &Git{identity: cfg.Identity, timeout: cfg.Timeout, pushTimeout: cfg.PushTimeout, maxOutput: cfg.MaxOutput}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	if g.pushTimeout <= 0 {
		g.pushTimeout = DefaultPushTimeout
	}
	if g.maxOutput <= 0 {
		g.maxOutput = DefaultMaxOutput
	}
	if cfg.Identity != (Identity{}) {
		if err := cfg.Identity.Check(); err != nil {
			return nil, err
		}
	}
	path := cfg.GitPath
	if path == "" {
		path = "git"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return nil, errors.New("git is not installed (or GitPath does not name it)")
	}
	g.path = p
	if cfg.Home == "" {
		dir, err := os.MkdirTemp("", "kandev-git-home-")
		if err != nil {
			return nil, fmt.Errorf("create git's home directory: %w", err)
		}
		g.home, g.ownHome = dir, true
	} else {
		st, err := os.Stat(cfg.Home)
		if err != nil || !st.IsDir() {
			return nil, errors.New("the git home directory (Home) is not a directory")
		}
		g.home = cfg.Home
	}
	return g, nil
}

// Close removes the home directory NewGit made (nothing otherwise).
func (g *Git) Close() error {
	if g.ownHome {
		return os.RemoveAll(g.home)
	}
	return nil
}

// safeConfig is given to every git command on its command line (through
// GIT_CONFIG_COUNT, which outranks the repository's own configuration):
// nothing in a repository's config makes git run a program, sign, prompt,
// ask a credential helper or change the output formats parsed here.
// Filters (git-lfs) and attributes stay the repository's: they decide
// what a commit stores.
var safeConfig = [][2]string{
	{"core.hooksPath", os.DevNull},
	{"core.fsmonitor", "false"},
	{"core.askPass", ""},
	{"core.pager", "cat"},
	{"core.quotePath", "false"},
	{"core.excludesFile", os.DevNull},
	{"core.attributesFile", os.DevNull},
	{"credential.helper", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"log.showSignature", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"color.ui", "false"},
	{"diff.noprefix", "false"},
	{"diff.mnemonicPrefix", "false"},
	{"diff.relative", "false"},
	{"submodule.recurse", "false"},
	{"protocol.allow", "never"},
	{"protocol.https.allow", "always"},
	{"protocol.http.allow", "always"},
	{"http.sslVerify", "true"},
}

// passEnv are the server's environment variables git still sees: where
// programs are, and the operator's proxy and CA settings for pushes.
var passEnv = []string{"PATH", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// call is one git command.
type call struct {
	op       string // what it does, for messages ("status", "push")
	gitDir   string
	workTree string
	args     []string
	stdin    []byte
	env      []string    // extra environment (identity)
	config   [][2]string // extra command-line config, after safeConfig
	timeout  time.Duration
	// truncate, when set, keeps the first maxOutput bytes of a longer
	// output instead of failing (limit then overrides maxOutput).
	truncate bool
	limit    int
	redact   *redact.Redactor
	// tap, when set, also sees git's raw standard error as it is written
	// (a clone's progress); it must not keep or show the text.
	tap io.Writer
}

// result is what a git command printed.
type result struct {
	out       []byte
	stderr    string // redacted
	exit      int    // 0, or git's exit status
	truncated bool
}

// run runs c; a non-zero exit is not an error here (callers read exit),
// a timeout, an overflow or a git that cannot start is.
func (g *Git) run(ctx context.Context, c call) (result, error) {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = g.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.path, c.args...) // #nosec G204 -- git with fixed subcommands; caller text only after -- / --end-of-options or on stdin
	cmd.Env = g.env(c)
	cmd.Dir = c.workTree
	if cmd.Dir == "" {
		cmd.Dir = g.home
	}
	limit := g.maxOutput
	if c.limit > 0 {
		limit = c.limit
	}
	stdout := &boundedBuffer{limit: limit}
	stderr := &boundedBuffer{limit: maxStderr, quiet: true}
	cmd.Stdout, cmd.Stderr = stdout, io.Writer(stderr)
	if c.tap != nil {
		cmd.Stderr = io.MultiWriter(stderr, c.tap)
	}
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	processGroup(cmd)
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	res := result{out: stdout.buf.Bytes(), stderr: redactText(c.redact, stderr.buf.String())}
	switch {
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled):
		return res, failed(kanban.CodeUnavailable, "git "+c.op+" took longer than "+timeout.String(), res.stderr)
	case ctx.Err() != nil:
		return res, failed(kanban.CodeUnavailable, "git "+c.op+" was cancelled", res.stderr)
	case stdout.overflow && c.truncate:
		res.truncated = true
		return res, nil
	case stdout.overflow:
		return res, failed(kanban.CodeUnavailable, "git "+c.op+" printed more than "+strconv.Itoa(limit)+" bytes", res.stderr)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.exit = exit.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, failed(kanban.CodeInternal, "git "+c.op+" could not run", redactText(c.redact, err.Error()))
	}
	return res, nil
}

func (g *Git) env(c call) []string {
	env := make([]string, 0, 32+2*len(safeConfig))
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env,
		"HOME="+g.home, "XDG_CONFIG_HOME="+g.home, "LC_ALL=C", "LANG=C", "TZ=UTC",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_LITERAL_PATHSPECS=1",
		"GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_PROTOCOL_FROM_USER=0",
	)
	if c.gitDir != "" {
		env = append(env, "GIT_DIR="+c.gitDir, "GIT_WORK_TREE="+c.workTree)
	}
	cfg := append(safeConfig[:len(safeConfig):len(safeConfig)], c.config...)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(cfg)))
	for i, kv := range cfg {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return append(env, c.env...)
}

func redactText(r *redact.Redactor, s string) string {
	if r == nil {
		r = redact.New()
	}
	return r.String(s)
}

// gitFailure maps a failed git command to a safe error: the few causes a
// caller can act on get their own message, everything else names the
// operation only. Detail keeps git's redacted output for the log.
func gitFailure(op string, res result) *Error {
	s := res.stderr
	switch {
	case strings.Contains(s, "index.lock") || strings.Contains(s, ".lock': File exists"):
		return failed(kanban.CodeConflict, "another git command is using the worktree (its index is locked); retry", s)
	case strings.Contains(s, "dubious ownership"):
		return failed(kanban.CodeUnavailable, "git refuses the repository: it is owned by another user", s)
	}
	return failed(kanban.CodeInternal, "git "+op+" failed (exit status "+strconv.Itoa(res.exit)+")", s)
}

// boundedBuffer keeps at most limit bytes. Past the limit it fails the
// write (so git gets EPIPE and stops) unless quiet, when it drops the rest.
type boundedBuffer struct {
	buf      bytes.Buffer
	limit    int
	quiet    bool
	overflow bool
}

var errOverflow = errors.New("output bound reached")

func (b *boundedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	if room > 0 {
		b.buf.Write(p[:room])
	}
	b.overflow = true
	if b.quiet {
		return len(p), nil
	}
	return 0, errOverflow
}

var _ io.Writer = (*boundedBuffer)(nil)
