//go:build !unix

package pgtest

import (
	"os"
	"os/exec"
)

type runAs struct{}

func serverUser(string) (*runAs, error) { return nil, nil }

func (*runAs) apply(*exec.Cmd) {}

func interrupt(p *os.Process) error { return p.Kill() }

func isSignalExit(error) bool { return false }
