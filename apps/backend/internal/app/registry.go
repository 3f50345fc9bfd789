package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The backend registry lets operator commands find a running backend's
// operator token the way a user expects: `kandev serve` records, per
// listening address, where its token is (never the token itself), and a
// CLI command started in any directory looks its --backend address up
// there. Records live in one directory of the user's own (0700, files
// 0600) and are removed when the backend stops; a record whose process
// is gone is ignored.

// BackendRecord is what a running `kandev serve` records about itself.
type BackendRecord struct {
	URL     string `json:"url"`
	PID     int    `json:"pid"`
	DataDir string `json:"data_dir"`
	// TokenFile is the operator token's file; empty when the backend took
	// its token from KANDEV_TOKEN.
	TokenFile string `json:"token_file,omitempty"`
}

// DefaultRegistryDir is the user's registry of running backends:
// $XDG_CACHE_HOME/kandev/backends (~/.cache/kandev/backends on Linux).
func DefaultRegistryDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "kandev", "backends")
}

// recordName is a backend address's record file name. Loopback names and
// unspecified listen addresses (0.0.0.0, ::) are recorded as 127.0.0.1,
// the address a local CLI reaches them at.
func recordName(hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port == "" {
		return "", fmt.Errorf("backend address %q has no port", hostport)
	}
	if ip := net.ParseIP(host); host == "" || host == "localhost" || (ip != nil && (ip.IsUnspecified() || ip.IsLoopback() && ip.To4() != nil)) {
		host = "127.0.0.1"
	}
	name := strings.NewReplacer(":", "_", "/", "_", "\\", "_").Replace(host) + "_" + port + ".json"
	return name, nil
}

// registerBackend records rec under addr (the bound listen address) and
// returns a function that removes the record.
func registerBackend(dir, addr string, rec BackendRecord) (func(), error) {
	name, err := recordName(addr)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("backend registry: %w", err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".record-*")
	if err != nil {
		return nil, fmt.Errorf("backend registry: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return nil, fmt.Errorf("backend registry: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return nil, fmt.Errorf("backend registry: %w", err)
	}
	return func() {
		// Remove only our own record: another backend may have taken the
		// address over since.
		if cur, err := readRecord(path); err == nil && cur.PID == rec.PID {
			_ = os.Remove(path)
		}
	}, nil
}

// lookupBackend returns the live record for backendURL, or nil when no
// running backend of this user is recorded at that address.
func lookupBackend(dir, backendURL string) *BackendRecord {
	if dir == "" {
		return nil
	}
	u, err := url.Parse(backendURL)
	if err != nil || u.Host == "" {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
	}
	name, err := recordName(net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil
	}
	rec, err := readRecord(filepath.Join(dir, name))
	if err != nil || !processAlive(rec.PID) {
		return nil
	}
	return rec
}

func readRecord(path string) (*BackendRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec BackendRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("backend record %s: %w", path, err)
	}
	return &rec, nil
}

// processAlive reports whether pid is a running process (signal 0).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM)
}
