//go:build !unix

package notify

import (
	"os/exec"
	"time"
)

const waitDelay = 2 * time.Second

func processGroup(*exec.Cmd) {}
