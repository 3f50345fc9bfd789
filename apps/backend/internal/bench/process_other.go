//go:build !linux

package bench

import "os/exec"

// dieWithParent is Linux-only; elsewhere children are stopped by stop().
func dieWithParent(*exec.Cmd) {}
