//go:build !unix

package forgetest

import "os/exec"

func processGroup(*exec.Cmd) {}

func stop(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
