//go:build !linux

package pgtest

import "os/exec"

// dieWithParent is a no-op where the kernel has no parent-death signal:
// a killed test binary may leave its server running there.
func dieWithParent(*exec.Cmd) {}
