package kanban

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
)

// ExecutorTypeDocker is the type of the exec-docker executor: each session's
// agent runs in a container of its own (see DockerConfig).
const ExecutorTypeDocker = "docker"

// Bounds of a Docker executor profile's settings.
const (
	MaxDockerMounts = 16
	MaxDockerEnv    = 64
	MaxDockerEnvLen = 4096
	MaxDockerImage  = 255
	MaxDockerCPUs   = 1024
	MaxDockerMemMB  = 1 << 20 // 1 TiB
	MinDockerMemMB  = 16
)

// DockerNetworks are the network modes a Docker profile may choose: the
// host's (the agent reaches Kandev, and only what the host reaches, over
// loopback) or none (no network at all, Kandev's MCP server included).
var DockerNetworks = []string{"host", "none"}

// DockerWorkdirs are where a Docker session works: the task's git worktree
// (as exec-worktree) or the task's directory (as exec-local).
var DockerWorkdirs = []string{"worktree", "task"}

// DockerReserved is the container path Kandev mounts its own files under
// (the kandev binary, the session's token file): no mount may reach it.
const DockerReserved = "/kandev"

// DockerMount is one bind mount of a Docker profile: a host directory
// (checked against the operator's source roots at save and at launch) at
// an absolute container path.
type DockerMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// DockerConfig is the config of a Docker executor profile (the keys of
// kanban.ExecutorProfile.Config).
type DockerConfig struct {
	Image    string        `json:"image"`
	Network  string        `json:"network,omitempty"`
	Workdir  string        `json:"workdir,omitempty"`
	CPUs     float64       `json:"cpus,omitempty"`
	MemoryMB int           `json:"memory_mb,omitempty"`
	Mounts   []DockerMount `json:"mounts,omitempty"`
	// Env are plain settings set in the container, readable by whoever
	// lists executor profiles: never secrets. PassEnv are names of the
	// backend's own environment passed in (under the agents' allow-list).
	Env     map[string]string `json:"env,omitempty"`
	PassEnv []string          `json:"pass_env,omitempty"`
}

var (
	dockerImage   = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]*$`)
	dockerEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// ParseDockerConfig reads and checks a Docker profile's config: unknown
// keys, a missing image, a network other than host or none, bounds and
// mount targets are refused (VALIDATION_ERROR naming the setting, never
// its value). Mount sources are checked by the caller's filesystem policy.
func ParseDockerConfig(cfg map[string]json.RawMessage) (*DockerConfig, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, FieldError("config", "values must be valid JSON")
	}
	var c DockerConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, FieldError("config", "a Docker profile's settings are image, network, workdir, cpus, memory_mb, mounts, env and pass_env, with the documented types")
	}
	if c.Network == "" {
		c.Network = DockerNetworks[0]
	}
	if c.Workdir == "" {
		c.Workdir = DockerWorkdirs[0]
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *DockerConfig) check() error {
	switch {
	case c.Image == "" || len(c.Image) > MaxDockerImage || !dockerImage.MatchString(c.Image):
		return FieldError("config.image", "must be a local image reference (lowercase name[:tag], at most %d characters)", MaxDockerImage)
	case !slices.Contains(DockerNetworks, c.Network):
		return FieldError("config.network", "must be one of %s", strings.Join(DockerNetworks, ", "))
	case !slices.Contains(DockerWorkdirs, c.Workdir):
		return FieldError("config.workdir", "must be one of %s", strings.Join(DockerWorkdirs, ", "))
	case c.CPUs < 0 || c.CPUs > MaxDockerCPUs:
		return FieldError("config.cpus", "must be between 0 (no limit) and %d", MaxDockerCPUs)
	case c.MemoryMB != 0 && (c.MemoryMB < MinDockerMemMB || c.MemoryMB > MaxDockerMemMB):
		return FieldError("config.memory_mb", "must be 0 (no limit) or between %d and %d", MinDockerMemMB, MaxDockerMemMB)
	case len(c.Mounts) > MaxDockerMounts:
		return FieldError("config.mounts", "at most %d mounts", MaxDockerMounts)
	case len(c.Env) > MaxDockerEnv || len(c.PassEnv) > MaxDockerEnv:
		return FieldError("config.env", "at most %d variables in env and in pass_env each", MaxDockerEnv)
	}
	for i, m := range c.Mounts {
		if why := DockerTargetProblem(m.Target); why != "" {
			return FieldError("config.mounts", "mount %d: the target %s", i+1, why)
		}
		if m.Source == "" || !MountSafe(m.Source) {
			return FieldError("config.mounts", "mount %d: the source must be an absolute host directory without commas, quotes or control characters", i+1)
		}
	}
	for k, v := range c.Env {
		if !dockerEnvOK(k) {
			return FieldError("config.env", "variable names must match %s and not start with KANDEV_ or DOCKER_", dockerEnvName)
		}
		if len(v) > MaxDockerEnvLen || strings.ContainsRune(v, 0) {
			return FieldError("config.env", "values are at most %d bytes, without NUL", MaxDockerEnvLen)
		}
	}
	for _, k := range c.PassEnv {
		if !dockerEnvOK(k) {
			return FieldError("config.pass_env", "variable names must match %s and not start with KANDEV_ or DOCKER_", dockerEnvName)
		}
	}
	return nil
}

func dockerEnvOK(k string) bool {
	return dockerEnvName.MatchString(k) && !strings.HasPrefix(k, "KANDEV_") && !strings.HasPrefix(k, "DOCKER_")
}

// DockerTargetProblem checks a container path Kandev mounts something at:
// absolute, clean, and neither the root, a system directory nor under
// DockerReserved. A problem ("" for none) completes "the target ...".
func DockerTargetProblem(t string) string {
	if t == "" || !MountSafe(t) || path.Clean(t) != t || len(t) > MaxPathLen {
		return "must be a clean absolute path without commas, quotes or control characters"
	}
	for _, sys := range []string{"/", "/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/lib", "/usr", DockerReserved} {
		if t == sys || (sys != "/" && strings.HasPrefix(t, sys+"/")) {
			return "may not be the root, a system directory or lie under " + DockerReserved
		}
	}
	return ""
}

// MountSafe reports whether p can be written in a docker --mount option:
// an absolute path without the option syntax's separators and quotes.
func MountSafe(p string) bool {
	return path.IsAbs(p) && !strings.ContainsAny(p, ",\"'\\") &&
		!strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// DockerSourceProblem checks a mount source once the filesystem policy
// resolved it: never the run directories where daemon sockets live (the
// Docker socket mounted in would hand the agent the host). A problem (""
// for none) completes "the source ...".
func DockerSourceProblem(real string) string {
	for _, run := range []string{"/run", "/var/run"} {
		if real == run || strings.HasPrefix(real, run+"/") || strings.HasPrefix(run, strings.TrimSuffix(real, "/")+"/") {
			return "may not be or hold a run directory (where the Docker socket lives)"
		}
	}
	return ""
}
