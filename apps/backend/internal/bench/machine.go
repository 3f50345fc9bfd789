package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// DescribeMachine reads the CPU model from /proc/cpuinfo and the kernel
// release from /proc (empty where unavailable).
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		_ = f.Close() // read-only
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if m.CPUModel == "" {
		m.CPUModel = "unknown"
	}
	return m
}
