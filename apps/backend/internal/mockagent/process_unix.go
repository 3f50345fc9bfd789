//go:build unix

package mockagent

import (
	"os/exec"
	"syscall"
)

// processGroup runs an @sh command in its own process group, and makes
// its end (the time bound, a cancelled turn) kill the whole group: what
// the command started in the background ends with it.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
