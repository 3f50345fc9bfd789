// Package remote connects to the hosts of the SSH executor (exec-ssh)
// through golang.org/x/crypto/ssh: public-key authentication with a key
// file on the backend's machine, the host's key checked against a
// known_hosts file (an unknown host refused unless the profile trusts on
// first use, then its key recorded; a changed key always refused),
// bounded commands, file uploads, remote-forwarded loopback listeners and
// keepalives that close a connection whose host stopped answering.
//
// It depends on kanban (the profile's checked config), x/crypto/ssh and
// the standard library only.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Why a connection was refused or failed: Dial's errors wrap one of these
// (errors.Is), each a sentence an operator can act on, naming no path,
// host or key.
var (
	ErrHostKeyMismatch = errors.New("the host's key differs from the one the known_hosts file records for it (refused: a reinstalled host, or someone in between; check the key and fix the file)")
	ErrHostKeyUnknown  = errors.New("the host's key is not in the known_hosts file (refused: add it, e.g. with ssh-keyscan, or set trust_on_first_use)")
	ErrAuth            = errors.New("the host refused the profile's key (authentication failed: add its public key to the user's authorized_keys)")
	ErrUnreachable     = errors.New("the host did not answer on its SSH port")
	ErrKeyFile         = errors.New("the profile's key file cannot be used")
	ErrKnownHosts      = errors.New("the profile's known_hosts file cannot be used")
)

// Bounds of a connection.
const (
	DefaultDialTimeout = 20 * time.Second
	keepaliveEvery     = 15 * time.Second
	keepaliveWait      = 15 * time.Second
)

// Client is one SSH connection to a profile's host.
type Client struct {
	c      *ssh.Client
	closed chan struct{}
	once   sync.Once
}

// Dial connects to cfg's host within timeout (DefaultDialTimeout when 0)
// and authenticates with cfg's key file, checking the host's key. Its
// errors wrap the sentinels above.
func Dial(ctx context.Context, cfg *kanban.SSHConfig, timeout time.Duration) (*Client, error) {
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	signer, err := readKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	hk := &hostKeys{file: cfg.KnownHostsFile, tofu: cfg.TrustOnFirstUse}
	c, err := dial(ctx, cfg, signer, hk, nil, timeout)
	if errors.Is(err, ErrHostKeyMismatch) && hk.otherType() {
		// The host offered a key of a type the file does not record for
		// it (x/crypto picks the first algorithm both sides know): ask for
		// the recorded types before calling it a mismatch.
		c, err = dial(ctx, cfg, signer, hk, hk.wantAlgorithms(), timeout)
	}
	if err != nil {
		return nil, err
	}
	cl := &Client{c: c, closed: make(chan struct{})}
	go cl.keepalive()
	return cl, nil
}

func dial(ctx context.Context, cfg *kanban.SSHConfig, signer ssh.Signer, hk *hostKeys, algos []string, timeout time.Duration) (*ssh.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := cfg.Addr()
	conf := &ssh.ClientConfig{
		User: cfg.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hk.check, HostKeyAlgorithms: algos, Timeout: timeout,
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, ErrUnreachable
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, conf)
	stop()
	if err != nil {
		_ = conn.Close()
		return nil, classify(err, ctx)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// classify maps a handshake error to the sentinel it means.
func classify(err error, ctx context.Context) error {
	switch {
	case errors.Is(err, ErrHostKeyMismatch), errors.Is(err, ErrHostKeyUnknown), errors.Is(err, ErrKnownHosts):
		return unwrapSentinel(err)
	case strings.Contains(err.Error(), "unable to authenticate"):
		return ErrAuth
	case ctx.Err() != nil:
		return fmt.Errorf("%w (no SSH handshake within the time allowed)", ErrUnreachable)
	}
	return fmt.Errorf("%w (the SSH handshake failed)", ErrUnreachable)
}

func unwrapSentinel(err error) error {
	for _, s := range []error{ErrHostKeyMismatch, ErrHostKeyUnknown, ErrKnownHosts} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// readKey reads the private key file: a regular file that only its owner
// may read (as ssh requires), without a passphrase.
func readKey(path string) (ssh.Signer, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: it does not exist on the backend's machine", ErrKeyFile)
	case err != nil:
		return nil, fmt.Errorf("%w: it cannot be read", ErrKeyFile)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%w: it is not a regular file", ErrKeyFile)
	case st.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%w: others than its owner may read it (chmod 600 it)", ErrKeyFile)
	case st.Size() > 64<<10:
		return nil, fmt.Errorf("%w: it is too large to be a private key", ErrKeyFile)
	}
	b, err := os.ReadFile(path) //nolint:gosec // the operator's configured key file, checked above
	if err != nil {
		return nil, fmt.Errorf("%w: it cannot be read", ErrKeyFile)
	}
	signer, err := ssh.ParsePrivateKey(b)
	var pm *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pm):
		return nil, fmt.Errorf("%w: it is passphrase-protected (use a key without a passphrase, kept 0600)", ErrKeyFile)
	case err != nil:
		return nil, fmt.Errorf("%w: it is not an OpenSSH or PEM private key", ErrKeyFile)
	}
	return signer, nil
}

// Close closes the connection (and with it every session and listener).
func (c *Client) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = c.c.Close()
	})
	return err
}

// Done is closed once the connection was closed (by Close or a failed
// keepalive).
func (c *Client) Done() <-chan struct{} { return c.closed }

// keepalive closes the connection when the host stops answering.
func (c *Client) keepalive() {
	t := time.NewTicker(keepaliveEvery)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		answered := make(chan error, 1)
		go func() {
			_, _, err := c.c.SendRequest("keepalive@openssh.com", true, nil)
			answered <- err
		}()
		select {
		case err := <-answered:
			if err == nil {
				continue
			}
		case <-time.After(keepaliveWait):
		case <-c.closed:
			return
		}
		_ = c.Close()
		return
	}
}

// Session opens a session (one remote command).
func (c *Client) Session() (*ssh.Session, error) { return c.c.NewSession() }

// Run runs cmd on the host with stdin (nil for none), bounded by ctx, and
// returns its stdout (the first maxOut bytes). Its error carries the
// command's exit status and the start of its stderr (clipped).
func (c *Client) Run(ctx context.Context, cmd string, stdin io.Reader, maxOut int) (string, error) {
	out := &capped{max: maxOut}
	err := c.RunTo(ctx, cmd, stdin, out)
	return out.String(), err
}

// RunTo is Run with the command's stdout written to stdout.
func (c *Client) RunTo(ctx context.Context, cmd string, stdin io.Reader, stdout io.Writer) error {
	s, err := c.c.NewSession()
	if err != nil {
		return fmt.Errorf("open an SSH session: %w", err)
	}
	defer func() { _ = s.Close() }()
	errOut := &capped{max: 2048}
	s.Stdin, s.Stdout, s.Stderr = stdin, stdout, errOut
	if err := s.Start(cmd); err != nil {
		return fmt.Errorf("start a remote command: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Close()
		return fmt.Errorf("the remote command did not finish in time: %w", ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(errOut.String())
		var ee *ssh.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("the remote command exited with status %d: %s", ee.ExitStatus(), kanban.Clip(msg, 400))
		}
		return fmt.Errorf("the remote command failed: %w", err)
	}
	return nil
}

// Upload writes r to path on the host with mode (octal, e.g. "600"),
// created under umask 077 with a temporary name and renamed into place,
// so that it is never seen half written nor readable by others meanwhile.
// path must be safe in a shell word (Quote is applied).
func (c *Client) Upload(ctx context.Context, path, mode string, r io.Reader) error {
	tmp := path + ".tmp-" + kanban.NewID()
	cmd := "umask 077 && cat > " + Quote(tmp) + " && chmod " + mode + " " + Quote(tmp) + " && mv -f " + Quote(tmp) + " " + Quote(path) +
		" || { rm -f " + Quote(tmp) + "; exit 1; }"
	_, err := c.Run(ctx, cmd, r, 1024)
	return err
}

// ListenLoopback asks the host to listen on its 127.0.0.1 at a port it
// chooses and to forward each connection to the returned listener (ssh
// -R). Closing the listener cancels the forward.
func (c *Client) ListenLoopback() (net.Listener, error) {
	return c.c.Listen("tcp", "127.0.0.1:0")
}

// Quote is s as one POSIX shell word.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.b); room > 0 {
		if room > len(p) {
			room = len(p)
		}
		c.b = append(c.b, p[:room]...)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}
