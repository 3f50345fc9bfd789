//go:build !unix

package mockagent

import "os/exec"

// processGroup: without process groups only the command itself is killed.
func processGroup(*exec.Cmd) {}
