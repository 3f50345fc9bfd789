//go:build !unix

package terminal

import (
	"errors"
	"os"
	"os/exec"
)

var errNoPTY = errors.New("terminals need a unix system")

func startPTY(*exec.Cmd, int, int) (*os.File, error) { return nil, errNoPTY }

func setSize(*os.File, int, int) error { return errNoPTY }

func killSession(int) {}
