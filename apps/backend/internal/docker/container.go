package docker

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Fixed paths inside every container, under kanban.DockerReserved.
const (
	BinaryPath = kanban.DockerReserved + "/bin/kandev"
	TokenPath  = kanban.DockerReserved + "/token"
)

// Mount is a bind mount, host path to container path.
type Mount struct {
	Source, Target string
	ReadOnly       bool
}

// Spec is one session's container.
type Spec struct {
	Name   string
	Image  string
	Labels map[string]string
	// Network is "host" or "none".
	Network  string
	CPUs     float64
	MemoryMB int
	// User is "uid:gid": the agent writes the worktree as the backend's
	// user.
	User string
	// Workdir is mounted read-write at the same path, the agent's cwd.
	Workdir string
	// Binary and TokenFile are mounted read-only at BinaryPath and
	// TokenPath.
	Binary, TokenFile string
	Mounts            []Mount
	// Env is set in the container: names on the command line, values in
	// the CLI's environment only.
	Env map[string]string
}

// PidsLimit bounds the processes of one container.
const PidsLimit = 4096

// createArgs is the docker run command line of s (no value of s.Env is on
// it). No privilege is added: every capability is dropped, privileges can
// never be gained, no device and no daemon socket is mounted (mounts are
// directories the policy allowed), and the first process is docker's init
// running `kandev agent hold`, which waits to be stopped. The image is
// never pulled: it must be on the daemon.
func createArgs(s Spec) []string {
	args := []string{"run", "-d", "--init", "--pull", "never", "--name", s.Name, "--network", s.Network,
		"--user", s.User, "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--pids-limit", strconv.Itoa(PidsLimit), "--tmpfs", "/tmp", "--workdir", s.Workdir,
		"--mount", bind(s.Workdir, s.Workdir, false),
		"--mount", bind(s.Binary, BinaryPath, true),
		"--mount", bind(s.TokenFile, TokenPath, true)}
	for _, k := range sortedKeys(s.Labels) {
		args = append(args, "--label", k+"="+s.Labels[k])
	}
	if s.CPUs > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(s.CPUs, 'f', -1, 64))
	}
	if s.MemoryMB > 0 {
		mem := strconv.Itoa(s.MemoryMB) + "m"
		args = append(args, "--memory", mem, "--memory-swap", mem)
	}
	for _, m := range s.Mounts {
		args = append(args, "--mount", bind(m.Source, m.Target, m.ReadOnly))
	}
	for _, k := range sortedKeys(s.Env) {
		args = append(args, "-e", envArg(k, s.Env[k]))
	}
	return append(args, "--entrypoint", BinaryPath, "--", s.Image, "agent", "hold")
}

func bind(src, dst string, ro bool) string {
	m := "type=bind,source=" + src + ",target=" + dst
	if ro {
		m += ",readonly"
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Create removes a container of the same name a crash may have left, then
// creates and starts s, and returns its id. Every path of s must be
// MountSafe (the caller checked the policy and the form).
func (c *Client) Create(ctx context.Context, s Spec) (string, error) {
	for _, p := range append([]string{s.Workdir, s.Binary, s.TokenFile}, mountPaths(s.Mounts)...) {
		if !kanban.MountSafe(p) {
			return "", fmt.Errorf("a path to mount holds a comma, a quote or a control character, which docker cannot mount")
		}
	}
	if err := c.Remove(ctx, s.Name); err != nil {
		return "", err
	}
	return c.run(ctx, valuesEnv(s.Env), createArgs(s)...)
}

func mountPaths(ms []Mount) []string {
	out := make([]string, 0, 2*len(ms))
	for _, m := range ms {
		out = append(out, m.Source, m.Target)
	}
	return out
}

// Exec is the unstarted `docker exec -i` of argv in container id, in dir,
// with env (KEY=VALUE: names on the command line, values in the CLI's
// environment). It is the agent's (or a script's) process: its stdio is
// the command's. It is not bounded in time by the client: the caller
// stops it (and removing the container ends what it started).
func (c *Client) Exec(id, dir string, env []string, argv ...string) *exec.Cmd {
	args := []string{"exec", "-i", "--workdir", dir}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := cut(kv)
		vars[k] = v
	}
	for _, k := range sortedKeys(vars) {
		args = append(args, "-e", envArg(k, vars[k]))
	}
	args = append(append(args, "--", id), argv...)
	cmd := exec.Command(c.Path, args...) //nolint:gosec // the server's docker CLI; arguments the runtime builds
	cmd.Env = append(append([]string{}, c.Env...), valuesEnv(vars)...)
	return cmd
}

// envArg is the -e argument of variable k: its name alone, the value
// taken from the CLI's environment (valuesEnv), so that no value is on a
// command line, except for the variables the CLI itself reads (HOME,
// PATH, …), which never hold secrets and must not change the CLI's own.
func envArg(k, v string) string {
	if containsName(cliEnv, k) {
		return k + "=" + v
	}
	return k
}

// valuesEnv is the CLI environment that carries vars' values for envArg.
func valuesEnv(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for _, k := range sortedKeys(vars) {
		if !containsName(cliEnv, k) {
			out = append(out, k+"="+vars[k])
		}
	}
	return out
}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
