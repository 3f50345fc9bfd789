package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/remote"
)

// The SSH executor (exec-ssh): each session's agent runs on the
// profile's host, reached with golang.org/x/crypto/ssh (internal/remote:
// the host's key checked against the profile's known_hosts file). At
// launch, after the session's local working directory (its worktree) and
// token file exist, the run connects and makes the session's directory
// <work_root>/kandev-<session id> (0700) there: work/ holds the
// repository, cloned from a git bundle of the local worktree's HEAD (its
// branch checked out); token and env are 0600 files (the session token
// and the agent's variables, on no command line); the kandev binary
// (static, checked for the host's OS and architecture) is uploaded once
// per version under <work_root>/.kandev-bin. The agent starts in work/
// with ACP over the session's stdio; its `kandev mcp` runs from the
// uploaded binary and reaches the backend through a port the host
// listens on at 127.0.0.1 and forwards over the connection (ssh -R).
// Prepare and cleanup scripts run in work/ on the host. When the run
// ends, however it ends, the agent's (and scripts') process groups are
// killed, the session's directory removed, the forward and the
// connection closed. The agent's commits stay on the host only: see the
// Executors page.

// sshTimeout bounds each step the run takes on the host (the binary's
// upload included) and its cleanup.
const sshTimeout = 2 * time.Minute

// sshHost is a run's SSH host: its connection and what the run made
// there. Set and removed by the run's goroutine only.
type sshHost struct {
	c       *remote.Client
	dir     string // the session's directory on the host
	work    string // dir/work: the agent's cwd
	bin     string // the uploaded kandev binary
	fwd     *remote.Forwarder
	backend string // the backend's URL as the host reaches it
	repos   []syncedRepo
}

// bridge is where a session's `kandev mcp` runs from, with its token file
// and the backend's URL, when not from this machine's (the SSH host's).
type bridge struct {
	exe, tokenFile, backend string
}

var sessionIDSafe = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// sshPlacement reads an SSH profile's config into l (checked again here:
// rows may predate the rules) and the agent's variables, and returns the
// kind of local working directory it is synced from.
func (r *run) sshPlacement(l *launch) (string, error) {
	var err error
	if l.ssh, err = kanban.ParseSSHConfig(l.executor.Config); err != nil {
		return "", fmt.Errorf("the SSH executor profile's config is invalid: %w", err)
	}
	if !sessionIDSafe.MatchString(r.id) {
		return "", errors.New("the session's id cannot name a directory on the SSH host")
	}
	vars := map[string]string{}
	for k, v := range l.typ.Env { // the agent type's own variables (server-side agents file)
		vars[k] = v
	}
	if l.model != "" && l.typ.ModelVar != "" {
		vars[l.typ.ModelVar] = l.model
	}
	for _, k := range sortedKeys(vars) {
		l.env = append(l.env, k+"="+vars[k])
	}
	if l.ssh.Workdir == "task" {
		return executorLocal, nil
	}
	return executorWorktree, nil
}

// startHost connects to the SSH profile's host and prepares the session's
// directory there (SSH executor only). Its errors are safe to show.
func (r *run) startHost(l *launch) error {
	if l.ssh == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, sshTimeout)
	defer cancel()
	c, err := remote.Dial(ctx, l.ssh, 0)
	if err != nil {
		return fmt.Errorf("the SSH executor could not connect to its host: %w", err)
	}
	h := &sshHost{c: c, dir: path.Join(l.ssh.WorkRoot, "kandev-"+r.id)}
	h.work = h.dir + "/work"
	r.host = h // removeHost undoes whatever follows
	if err := r.m.prepareHost(ctx, h, l.ssh.WorkRoot, l.token, envScript(l.env)); err != nil {
		return err
	}
	if err := r.syncRepository(ctx, h, l); err != nil {
		return err
	}
	if err := h.forward(r.ctx, r.m.cfg.BackendURL); err != nil {
		r.m.log.WarnContext(r.ctx, "forward a port of the SSH host to the backend", "err", err)
		return errors.New("the SSH host refused to forward a loopback port to the backend (AllowTcpForwarding in its sshd_config)")
	}
	l.cwd = h.work
	l.bridge = &bridge{exe: h.bin, tokenFile: h.dir + "/token", backend: h.backend}
	r.rec.note("status", "Connected to the SSH host "+kanban.Clip(l.ssh.Host, 100)+" as "+kanban.Clip(l.ssh.User, 64)+
		"; the agent runs in "+kanban.Clip(h.work, 300)+" there.")
	return nil
}

// envScript is the env file: one export per variable, values quoted (a
// name that is not a shell variable name is left out).
func envScript(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if shellName.MatchString(k) {
			b.WriteString("export " + k + "=" + remote.Quote(v) + "\n")
		}
	}
	return b.String()
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// binaryCache remembers the digest of the kandev binary by its identity,
// so that it is hashed once per build.
type binaryCache struct {
	mu   sync.Mutex
	key  string
	hash string
}

func (b *binaryCache) digest(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	key := p + "|" + strconv.FormatInt(st.Size(), 10) + "|" + st.ModTime().String()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.key == key {
		return b.hash, nil
	}
	f, err := os.Open(p) //nolint:gosec // the server's own binary
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	b.key, b.hash = key, hex.EncodeToString(sum.Sum(nil))[:16]
	return b.hash, nil
}

// prepareHost makes the session's directory on the host with its work/
// directory, token and env files (one command: the token and the env
// file's text come on its stdin, never on a command line) and puts the
// kandev binary under the work root, once per version (named by its
// digest); the host must run the binary's OS and architecture.
func (m *Manager) prepareHost(ctx context.Context, h *sshHost, root, token, env string) error {
	bin, err := filepath.EvalSymlinks(m.cfg.Executable)
	if err != nil || !staticBinary(bin) {
		return errors.New("the SSH executor needs a static kandev binary (built with CGO_ENABLED=0)")
	}
	sum, err := m.binary.digest(bin)
	if err != nil {
		return errors.New("the SSH executor could not read the kandev binary")
	}
	binDir := root + "/.kandev-bin"
	h.bin = binDir + "/kandev-" + sum
	q := remote.Quote
	out, err := h.c.Run(ctx, "uname -sm && mkdir -p "+q(binDir)+" && chmod 700 "+q(root)+" "+q(binDir)+
		" && rm -rf "+q(h.dir)+" && mkdir -m 700 "+q(h.dir)+" "+q(h.work)+
		" && (umask 077 && IFS= read -r t && printf '%s\\n' \"$t\" > "+q(h.dir+"/token")+" && cat > "+q(h.dir+"/env")+")"+
		" && { test -x "+q(h.bin)+" && echo have || echo need; }", strings.NewReader(token+"\n"+env), 256)
	if err != nil {
		m.log.WarnContext(ctx, "prepare the session's directory on the SSH host", "err", err)
		return errors.New("could not make the session's directory under the SSH profile's work_root (see the server log)")
	}
	f := strings.Fields(out)
	if want := hostPlatform(); len(f) < 3 || f[0]+" "+f[1] != want {
		return fmt.Errorf("the SSH host does not run %s, which the kandev binary is built for", want)
	}
	if f[2] == "have" {
		return nil
	}
	file, err := os.Open(bin) //nolint:gosec // the server's own binary
	if err != nil {
		return errors.New("the SSH executor could not read the kandev binary")
	}
	defer func() { _ = file.Close() }()
	if err := h.c.Upload(ctx, h.bin, "700", file); err != nil {
		m.log.WarnContext(ctx, "upload the kandev binary to the SSH host", "err", err)
		return errors.New("could not upload the kandev binary to the SSH host (see the server log)")
	}
	return nil
}

// hostPlatform is what `uname -sm` prints on a host this binary runs on.
func hostPlatform() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "arm": "armv7l", "riscv64": "riscv64",
		"ppc64le": "ppc64le", "s390x": "s390x"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	osName := strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	return osName + " " + arch
}

// forward has the host listen on its 127.0.0.1 and forward to the backend.
func (h *sshHost) forward(ctx context.Context, backendURL string) error {
	u, err := url.Parse(backendURL)
	if err != nil || u.Host == "" {
		return errors.New("the backend's URL has no host")
	}
	ln, err := h.c.ListenLoopback()
	if err != nil {
		return err
	}
	h.fwd = remote.Forward(ctx, ln, u.Host)
	u.Host = ln.Addr().String()
	h.backend = u.String()
	return nil
}

// remoteCommand is the shell command that runs argv in work/ with the env
// file's variables, recording its process group (pidName, in the session's
// directory) for signal.
func (h *sshHost) remoteCommand(pidName string, extraEnv []string, argv ...string) string {
	q := remote.Quote
	var b strings.Builder
	b.WriteString("cd " + q(h.work) + " && . " + q(h.dir+"/env"))
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString(" && export " + k + "=" + q(v))
	}
	// sshd starts each session's shell as a session (and process group)
	// leader: $$ names the group of everything the command starts.
	b.WriteString(" && echo $$ > " + q(h.dir+"/"+pidName) + " && exec")
	for _, a := range argv {
		b.WriteString(" " + q(a))
	}
	return b.String()
}

// signalGroup signals the process group recorded in pidName on the host.
func (h *sshHost) signalGroup(ctx context.Context, pidName string, hard bool) error {
	sig := "TERM"
	if hard {
		sig = "KILL"
	}
	f := remote.Quote(h.dir + "/" + pidName)
	_, err := h.c.Run(ctx, "p=$(cat "+f+" 2>/dev/null) && kill -s "+sig+" -- \"-$p\" 2>/dev/null; exit 0", nil, 256)
	return err
}

// startRemote starts the agent on the host, its stdio the session's.
func (r *run) startRemote(l *launch) (io.WriteCloser, io.Reader, error) {
	h := r.host
	path := l.command.Path
	if path == selfCommand {
		path = h.bin
	}
	s, err := h.c.Session()
	if err != nil {
		return nil, nil, errors.New("start the agent: the SSH host refused a session")
	}
	stdin, err := s.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start the agent: %w", err)
	}
	stdout, err := s.StdoutPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start the agent: %w", err)
	}
	s.Stderr = l.stderr
	if err := s.Start(h.remoteCommand("agent.pid", nil, append([]string{path}, l.command.Args...)...)); err != nil {
		return nil, nil, errors.New("start the agent: the SSH host did not run its command")
	}
	p := &process{done: make(chan struct{})}
	p.signal = func(hard bool) {
		ctx, cancel := context.WithTimeout(r.keep(), 10*time.Second)
		defer cancel()
		if err := h.signalGroup(ctx, "agent.pid", hard); err != nil && hard {
			_ = h.c.Close() // the host does not answer: end the session with the connection
		}
		if hard {
			_ = s.Close()
		}
	}
	go func() {
		p.err = s.Wait()
		close(p.done)
	}()
	l.proc = p
	return stdin, stdout, nil
}

// runScript runs an executor script in work/ on the host, bounded by
// timeout (its process group is killed then), and returns its combined
// output (the first maxOut bytes).
func (h *sshHost) runScript(ctx context.Context, extraEnv []string, script string, timeout time.Duration, maxOut int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := h.c.Run(ctx, h.remoteCommand("script.pid", extraEnv, "sh", "-c", script+"\n")+" 2>&1", nil, maxOut)
	if ctx.Err() != nil {
		kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = h.signalGroup(kctx, "script.pid", true)
		kcancel()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return out, errors.New("timed out after " + timeout.String())
		}
		return out, ctx.Err()
	}
	return out, err
}

// removeHost undoes what the run made on the host: every process group it
// recorded killed, the session's directory (work tree, token, env file)
// removed, the forward and the connection closed.
func (r *run) removeHost() {
	h := r.host
	if h == nil {
		return
	}
	r.host = nil
	if h.fwd != nil {
		h.fwd.Close()
	}
	ctx, cancel := context.WithTimeout(r.keep(), sshTimeout)
	defer cancel()
	d := remote.Quote(h.dir)
	_, err := h.c.Run(ctx, "for f in "+d+"/agent.pid "+d+"/script.pid; do p=$(cat \"$f\" 2>/dev/null) && kill -s KILL -- \"-$p\" 2>/dev/null; done; rm -rf "+d, nil, 1024)
	if err != nil {
		r.m.log.ErrorContext(r.ctx, "remove the session's directory on the SSH host", "err", err)
	}
	_ = h.c.Close()
}
