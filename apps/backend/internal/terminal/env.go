package terminal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// EnvAllow is all a shell inherits of the backend's environment: exact
// names, and prefixes ending in "*". Nothing else passes — not the
// operator token (KANDEV_*, never, whatever this list says), not the
// forge tokens, not the model providers' keys. TERM is set to
// xterm-256color for the browser's terminal; COLORTERM is not passed (the
// board's terminal shows the 256 palette colours, not 24-bit ones).
var EnvAllow = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"}

// Environ is the environment of a shell, from environ (the backend's own,
// KEY=VALUE) through EnvAllow.
func Environ(environ []string) []string {
	out := make([]string, 0, len(EnvAllow)+2)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, "KANDEV_") || k == "TERM" || k == "COLORTERM" {
			continue
		}
		for _, a := range EnvAllow {
			if p, star := strings.CutSuffix(a, "*"); (star && strings.HasPrefix(k, p)) || (!star && a == k) {
				out = append(out, kv)
				break
			}
		}
	}
	return append(out, "TERM=xterm-256color")
}

// Shell is the shell terminals run: configured (an absolute path to an
// executable file, else an error), else the backend's $SHELL when that is
// one, else /bin/sh.
func Shell(configured string) (string, error) {
	if configured != "" {
		if !executable(configured) {
			return "", errors.New("terminal shell: must be the absolute path of an executable file")
		}
		return configured, nil
	}
	if sh := os.Getenv("SHELL"); executable(sh) {
		return sh, nil
	}
	return "/bin/sh", nil
}

func executable(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	st, err := os.Stat(p) //nolint:gosec // the operator's own configuration or $SHELL, checked to be an executable file
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
