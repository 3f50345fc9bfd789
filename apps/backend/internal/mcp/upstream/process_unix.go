//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts the server in its own process group, so stopping
// it stops whatever it started.
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopProcess sends SIGTERM to the server's process group and SIGKILL
// if it has not exited two seconds later.
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}) {
	pid := cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	go func() {
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
}
