// Package pgtest runs a throwaway PostgreSQL cluster for tests and
// benchmarks: the machine's own PostgreSQL binaries (Debian's postgresql
// package; nothing is downloaded), initdb into a temporary directory, a
// server listening on a Unix socket in that directory only (no TCP port),
// and everything removed when it stops. Tests get a fresh database each
// (Database); a machine without PostgreSQL skips them loudly.
//
// It imports only the standard library and pgx; nothing of Kandev.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the superuser of a throwaway cluster.
const User = "kandev"

// Bounds of starting and stopping a cluster.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 15 * time.Second
)

// ErrMissing is returned when no PostgreSQL server binaries are installed.
var ErrMissing = errors.New("PostgreSQL is not installed (make postgres installs Debian's postgresql package)")

// Cluster is one running throwaway PostgreSQL server.
type Cluster struct {
	dir  string // data directory and socket directory, removed on Stop
	cmd  *exec.Cmd
	done chan error // the server's exit

	mu  sync.Mutex
	n   int             // databases and schemas created
	dbs map[string]bool // databases CreateSchema created
}

// BinDir returns the directory of initdb and postgres: $KANDEV_PG_BIN, else
// the newest /usr/lib/postgresql/*/bin (Debian), else the directory of
// initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("KANDEV_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrMissing
}

// version is the major version in a /usr/lib/postgresql/N/bin path.
func version(dir string) int {
	var n int
	_, _ = fmt.Sscanf(filepath.Base(filepath.Dir(dir)), "%d", &n)
	return n
}

// Start initialises and starts a cluster in a new temporary directory. As
// root (PostgreSQL refuses to run as root) the server runs as the user
// nobody. The server is told to stop if this process dies.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kpg")
	if err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	c := &Cluster{dir: dir, done: make(chan error, 1), dbs: map[string]bool{}}
	if err := c.start(ctx, bin); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	owner, err := serverUser(c.dir)
	if err != nil {
		return err
	}
	// bin is the machine's PostgreSQL directory (BinDir); no test input.
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(c.dir, "data"), //nolint:gosec // see above
		"-U", User, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	owner.apply(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastLines(out))
	}
	logf, err := os.Create(filepath.Join(c.dir, "server.log"))
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	defer func() { _ = logf.Close() }()
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(c.dir, "data"), //nolint:gosec // bin as for initdb
		"-k", c.dir, "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=64MB",
		// Many serialisable store tests share the cluster at once: room for
		// their predicate locks (the default 64 per connection ran out).
		"-c", "max_pred_locks_per_transaction=256")
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	owner.apply(c.cmd)
	dieWithParent(c.cmd)
	started := make(chan error, 1)
	go func() {
		// The parent-death signal follows the starting thread: keep it
		// (locked to this goroutine) until the server exits.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.done <- c.cmd.Wait()
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	return c.waitReady(ctx)
}

// waitReady connects until the server answers, bounded by startTimeout.
func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case werr := <-c.done:
			c.done <- werr
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			return fmt.Errorf("postgres exited: %w: %s", werr, lastLines(log))
		case <-ctx.Done():
			_ = c.Stop()
			return fmt.Errorf("postgres did not accept connections within %s: %w", startTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// URL is the connection URL of database db on the cluster (its Unix socket).
func (c *Cluster) URL(db string) string {
	return "postgres://" + User + "@/" + url.PathEscape(db) + "?host=" + url.QueryEscape(c.dir) + "&sslmode=disable"
}

// Version is the server's version string (SHOW server_version).
func (c *Cluster) Version(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var v string
	return v, conn.QueryRow(ctx, `SHOW server_version`).Scan(&v)
}

// CreateDatabase creates a new empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context) (name, dbURL string, err error) {
	c.mu.Lock()
	c.n++
	name = fmt.Sprintf("d%d", c.n)
	c.mu.Unlock()
	if err := c.admin(ctx, "postgres", `CREATE DATABASE `+name); err != nil {
		return "", "", err
	}
	return name, c.URL(name), nil
}

// CreateSchema creates a new empty schema in database db (created on
// first use) and returns a URL whose search_path is that schema: tables
// created through it land there. A schema is far cheaper than a database
// (CREATE DATABASE copies a template).
func (c *Cluster) CreateSchema(ctx context.Context, db string) (name, schemaURL string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dbs[db] {
		if err := c.admin(ctx, "postgres", `CREATE DATABASE `+db); err != nil {
			return "", "", err
		}
		c.dbs[db] = true
	}
	c.n++
	name = fmt.Sprintf("s%d", c.n)
	if err := c.admin(ctx, db, `CREATE SCHEMA `+name); err != nil {
		return "", "", err
	}
	return name, c.URL(db) + "&search_path=" + name, nil
}

// DropSchema drops schema name of database db and everything in it.
func (c *Cluster) DropSchema(ctx context.Context, db, name string) error {
	return c.admin(ctx, db, `DROP SCHEMA IF EXISTS `+name+` CASCADE`)
}

// DropDatabase drops database name, closing its connections.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	return c.admin(ctx, "postgres", `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
}

// admin runs sql on database db.
func (c *Cluster) admin(ctx context.Context, db, sql string) error {
	conn, err := pgx.Connect(ctx, c.URL(db))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	_, err = conn.Exec(ctx, sql)
	return err
}

// Stop shuts the server down (fast shutdown, then SIGKILL after a bound)
// and removes its directory.
func (c *Cluster) Stop() error {
	var err error
	if c.cmd != nil && c.cmd.Process != nil {
		_ = interrupt(c.cmd.Process)
		select {
		case err = <-c.done:
		case <-time.After(stopTimeout):
			_ = c.cmd.Process.Kill()
			err = errors.Join(errors.New("postgres did not stop in time; killed"), <-c.done)
		}
		if isSignalExit(err) {
			err = nil
		}
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

// lastLines returns the end of a command's output, for error messages.
func lastLines(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}
