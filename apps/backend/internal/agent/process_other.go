//go:build !unix

package agent

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// killGroup kills the process itself where there are no process groups.
func killGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
