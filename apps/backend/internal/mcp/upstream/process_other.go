//go:build !unix

package upstream

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func stopProcess(cmd *exec.Cmd, _ <-chan struct{}) { _ = cmd.Process.Kill() }
