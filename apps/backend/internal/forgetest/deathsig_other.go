//go:build unix && !linux

package forgetest

import "syscall"

// deathSignal is a no-op where the kernel has no parent-death signal.
func deathSignal(*syscall.SysProcAttr) {}
