//go:build unix

package forgetest

import (
	"os/exec"
	"syscall"
)

// processGroup starts Prism in its own process group (node may start
// helpers) and, on Linux, asks the kernel to stop it when the test binary
// dies, so a killed test leaves no mock behind.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	deathSignal(cmd.SysProcAttr)
}

func stop(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
