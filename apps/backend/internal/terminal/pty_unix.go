//go:build unix

package terminal

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"github.com/creack/pty"
)

// startPTY starts cmd on a new pseudo-terminal of cols×rows as the
// leader of a new session, and returns the terminal's master side in
// non-blocking mode (so that closing it ends a read in progress).
func startPTY(cmd *exec.Cmd, cols, rows int) (*os.File, error) {
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}) //nolint:gosec // bounded by the caller
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	_ = f.Close()
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		killSession(cmd.Process.Pid)
		_, _ = cmd.Process.Wait()
		return nil, fmt.Errorf("terminal master: %w", err)
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// setSize sets the terminal's window size (without putting f back in
// blocking mode, as f.Fd would).
func setSize(f *os.File, cols, rows int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	ws := pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)} //nolint:gosec // bounded by the caller
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCSWINSZ), uintptr(unsafe.Pointer(&ws))) //nolint:gosec // TIOCSWINSZ takes a *Winsize
	}); err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// killSession sends SIGKILL to the process group sid and to every other
// process of session sid (the groups an interactive shell makes for its
// jobs). A process that left the session (setsid) is beyond it.
func killSession(sid int) {
	_ = syscall.Kill(-sid, syscall.SIGKILL)
	for _, pid := range sessionMembers(sid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
