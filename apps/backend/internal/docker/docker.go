// Package docker runs the containers of the Docker executor through the
// docker CLI (Debian's docker.io): one container per session, labelled so
// that the ones a previous process left are swept, created with no
// privilege beyond what the operator's profile gives, and the agent
// started inside with `docker exec -i` (ACP over its stdio). Every call
// but the agent's own exec is bounded in time. DOCKER_HOST (and the CLI's
// other DOCKER_* variables) select the daemon, as for the CLI itself.
//
// It depends on kanban (the profile's checked config) and the standard
// library only.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DefaultCallTimeout bounds each docker call (create, remove, list).
const DefaultCallTimeout = 60 * time.Second

// Label names of Kandev's containers.
const (
	LabelManaged = "dev.kandev.managed"
	LabelOwner   = "dev.kandev.owner"
	LabelSession = "dev.kandev.session"
	LabelTask    = "dev.kandev.task"
)

// cliEnv are the variables of the backend's environment the docker CLI
// gets: where the daemon is and how to reach it, nothing else.
var cliEnv = []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
	"DOCKER_API_VERSION", "HOME", "PATH", "XDG_RUNTIME_DIR"}

// Client runs the docker CLI.
type Client struct {
	// Path is the docker executable, fixed by the server.
	Path string
	// Env is the CLI's environment (cliEnv of the backend's).
	Env []string
	// Timeout bounds each call (DefaultCallTimeout when 0).
	Timeout time.Duration
}

// New returns a client of the docker CLI found on PATH, or nil when there
// is none.
func New() *Client {
	p, err := exec.LookPath("docker")
	if err != nil {
		return nil
	}
	c := &Client{Path: p, Timeout: DefaultCallTimeout}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); containsName(cliEnv, k) {
			c.Env = append(c.Env, kv)
		}
	}
	return c
}

func containsName(names []string, k string) bool {
	for _, n := range names {
		if n == k {
			return true
		}
	}
	return false
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultCallTimeout
	}
	return c.Timeout
}

// command is a docker command with the CLI's environment plus extra
// (values -e NAME passes on, so that none is on a command line).
func (c *Client) command(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path, args...) //nolint:gosec // the server's docker CLI; arguments the runtime builds
	cmd.Env = append(append([]string{}, c.Env...), extra...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs one bounded docker call and returns its trimmed stdout. Its
// error carries the CLI's message clipped (it names images and
// containers Kandev chose, no secret: values travel in the environment).
func (c *Client) run(ctx context.Context, extra []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cmd := c.command(ctx, extra, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("docker %s: no answer within %s", args[0], c.timeout())
		}
		msg := kanban.Clip(strings.TrimSpace(stderr.String()), 400)
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New("docker " + args[0] + ": " + msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// Ping checks that the daemon answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.run(ctx, nil, "version", "--format", "{{.Server.Version}}")
	return err
}

// ImageExists reports whether image is present on the daemon (no pull:
// the executor never downloads an image).
func (c *Client) ImageExists(ctx context.Context, image string) (bool, error) {
	_, err := c.run(ctx, nil, "image", "inspect", "--format", "{{.Id}}", "--", image)
	if err == nil {
		return true, nil
	}
	if strings.Contains(err.Error(), "No such image") || strings.Contains(err.Error(), "no such image") {
		return false, nil
	}
	return false, err
}

// List returns the ids of the containers (running or not) that have every
// label of labels (name=value).
func (c *Client) List(ctx context.Context, labels ...string) ([]string, error) {
	args := []string{"ps", "-a", "-q", "--no-trunc"}
	for _, l := range labels {
		args = append(args, "--filter", "label="+l)
	}
	out, err := c.run(ctx, nil, args...)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Fields(out), nil
}

// Remove removes containers by id or name, killing what runs in them; a
// container that is already gone is not an error.
func (c *Client) Remove(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := c.run(ctx, nil, append([]string{"rm", "-f", "-v", "--"}, ids...)...)
	if err != nil && strings.Contains(err.Error(), "No such container") {
		return nil
	}
	return err
}

// Sweep removes every container that has all of labels (those a previous
// process left) and returns how many it removed.
func (c *Client) Sweep(ctx context.Context, labels ...string) (int, error) {
	ids, err := c.List(ctx, labels...)
	if err != nil {
		return 0, err
	}
	return len(ids), c.Remove(ctx, ids...)
}
