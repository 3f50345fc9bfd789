//go:build unix

package worktree

import (
	"os/exec"
	"syscall"
)

// processGroup runs git in its own process group and makes a cancelled
// or timed-out command kill the whole group: git's helpers
// (git-remote-https, filters) end with it.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
