//go:build unix

package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// runAs is the user the server runs as: nil means this process's user.
type runAs struct{ uid, gid uint32 }

// serverUser picks who runs the server and gives them dir: PostgreSQL
// refuses to run as root, so root hands the cluster to nobody.
func serverUser(dir string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the user nobody to run PostgreSQL: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user nobody: %w", err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, fmt.Errorf("give the cluster dir to nobody: %w", err)
	}
	// The socket directory must be reachable by nobody.
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // a throwaway cluster's directory, traversable by its server
		return nil, err
	}
	return &runAs{uid: uint32(uid), gid: uint32(gid)}, nil
}

func (r *runAs) apply(cmd *exec.Cmd) {
	if r == nil {
		return
	}
	attrs(cmd).Credential = &syscall.Credential{Uid: r.uid, Gid: r.gid, NoSetGroups: true}
}

func attrs(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}

func interrupt(p *os.Process) error { return p.Signal(syscall.SIGINT) }

// isSignalExit reports whether err is the exit of a process we signalled.
func isSignalExit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}
