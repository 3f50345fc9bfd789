//go:build !linux

package bench

import (
	"errors"
	"time"
)

var errNoCPU = errors.New("process CPU times are read on Linux only")

// procCPU is Linux-only; CPU figures are left out elsewhere.
func procCPU(int) (time.Duration, error) { return 0, errNoCPU }

// selfCPU is Linux-only; CPU figures are left out elsewhere.
func selfCPU() (time.Duration, error) { return 0, errNoCPU }
