package pgtest

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to stop the server (fast shutdown) when
// the thread that started it exits: a test binary that is killed leaves
// no server behind. The caller keeps that thread alive while the server
// runs (Cluster.start).
func dieWithParent(cmd *exec.Cmd) { attrs(cmd).Pdeathsig = syscall.SIGINT }
