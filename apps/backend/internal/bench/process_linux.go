package bench

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the child receive SIGTERM if this process dies, so
// an interrupted run leaves no servers behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
