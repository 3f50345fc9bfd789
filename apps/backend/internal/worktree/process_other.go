//go:build !unix

package worktree

import "os/exec"

// processGroup leaves exec's default (kill git itself) where there are no
// process groups.
func processGroup(*exec.Cmd) {}
