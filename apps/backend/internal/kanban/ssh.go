package kanban

import (
	"bytes"
	"encoding/json"
	"net"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ExecutorTypeSSH is the type of the exec-ssh executor: each session's
// agent runs on a host reached over SSH (see SSHConfig).
const ExecutorTypeSSH = "ssh"

// Bounds of an SSH executor profile's settings.
const (
	MaxSSHHost     = 253
	MaxSSHUser     = 64
	DefaultSSHPort = 22
)

// SSHConfig is the config of an SSH executor profile (the keys of
// kanban.ExecutorProfile.Config). KeyFile and KnownHostsFile are paths on
// the backend's machine (the key itself never travels in a payload);
// WorkRoot is a directory on the host under which each session gets a
// directory of its own.
type SSHConfig struct {
	Host           string `json:"host"`
	Port           int    `json:"port,omitempty"`
	User           string `json:"user"`
	KeyFile        string `json:"key_file"`
	KnownHostsFile string `json:"known_hosts_file"`
	// TrustOnFirstUse records the key of a host the known_hosts file does
	// not know yet instead of refusing it (off by default). A key that
	// differs from the recorded one is refused either way.
	TrustOnFirstUse bool   `json:"trust_on_first_use,omitempty"`
	WorkRoot        string `json:"work_root"`
	// Workdir is what is copied to the host: the task's git worktree (as
	// exec-worktree makes it) or the task's directory (as exec-local
	// uses it), one of DockerWorkdirs.
	Workdir string `json:"workdir,omitempty"`
}

var (
	sshHost = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z]([0-9A-Za-z.-]*[0-9A-Za-z])?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)$`)
	sshUser = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
)

// ParseSSHConfig reads and checks an SSH profile's config: unknown keys,
// a missing or malformed host, user, key file, known_hosts file or work
// root, and a port out of range are refused (VALIDATION_ERROR naming the
// setting, never its value). Whether the files exist is checked at launch.
func ParseSSHConfig(cfg map[string]json.RawMessage) (*SSHConfig, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, FieldError("config", "values must be valid JSON")
	}
	var c SSHConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, FieldError("config", "an SSH profile's settings are host, port, user, key_file, known_hosts_file, trust_on_first_use, work_root and workdir, with the documented types")
	}
	if c.Port == 0 {
		c.Port = DefaultSSHPort
	}
	if c.Workdir == "" {
		c.Workdir = DockerWorkdirs[0]
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *SSHConfig) check() error {
	switch {
	case c.Host == "" || len(c.Host) > MaxSSHHost || !sshHost.MatchString(c.Host) || strings.HasPrefix(c.Host, "-"):
		return FieldError("config.host", "must be a host name or IP address (at most %d characters)", MaxSSHHost)
	case c.Port < 1 || c.Port > 65535:
		return FieldError("config.port", "must be between 1 and 65535")
	case c.User == "" || len(c.User) > MaxSSHUser || !sshUser.MatchString(c.User):
		return FieldError("config.user", "must be a user name (letters, digits, _ . -; at most %d characters)", MaxSSHUser)
	case !serverFilePath(c.KeyFile):
		return FieldError("config.key_file", "must be the clean absolute path of a private key file on the backend's machine")
	case !serverFilePath(c.KnownHostsFile):
		return FieldError("config.known_hosts_file", "must be the clean absolute path of a known_hosts file on the backend's machine")
	case c.KnownHostsFile == c.KeyFile:
		return FieldError("config.known_hosts_file", "must not be the key file")
	case !slices.Contains(DockerWorkdirs, c.Workdir):
		return FieldError("config.workdir", "must be one of %s", strings.Join(DockerWorkdirs, ", "))
	}
	if why := SSHWorkRootProblem(c.WorkRoot); why != "" {
		return FieldError("config.work_root", "%s", why)
	}
	return nil
}

// Addr is the host:port the profile connects to.
func (c *SSHConfig) Addr() string {
	return net.JoinHostPort(strings.Trim(c.Host, "[]"), strconv.Itoa(c.Port))
}

// serverFilePath reports whether p can name a file on the backend's
// machine: absolute, clean, valid UTF-8 without control characters, and
// not a directory's path ("/").
func serverFilePath(p string) bool {
	return p != "" && len(p) <= MaxPathLen && utf8.ValidString(p) && filepath.IsAbs(p) && filepath.Clean(p) == p && p != "/" &&
		!strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// SSHWorkRootProblem checks a profile's remote work root: a clean
// absolute POSIX path of letters, digits and / . _ - only (it is written
// into remote shell commands), neither the root nor a system directory.
// A problem ("" for none) completes "config.work_root: ...".
func SSHWorkRootProblem(p string) string {
	if p == "" || len(p) > MaxPathLen || !path.IsAbs(p) || path.Clean(p) != p ||
		strings.ContainsFunc(p, func(r rune) bool { return !safePathRune(r) }) {
		return "must be a clean absolute path on the host of letters, digits and / . _ - only"
	}
	for _, sys := range []string{"/", "/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/lib", "/usr", "/boot", "/var", "/root"} {
		if p == sys {
			return "may not be the root or a system directory"
		}
	}
	for _, sys := range []string{"/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/lib", "/usr", "/boot"} {
		if strings.HasPrefix(p, sys+"/") {
			return "may not lie in a system directory"
		}
	}
	return ""
}

func safePathRune(r rune) bool {
	return r == '/' || r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}
