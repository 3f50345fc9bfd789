//go:build unix

package notify

import (
	"os/exec"
	"syscall"
	"time"
)

// waitDelay bounds how long a killed apprise's output is waited for.
const waitDelay = 2 * time.Second

// processGroup runs apprise in its own process group and makes a
// cancelled or timed-out run kill the whole group.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
