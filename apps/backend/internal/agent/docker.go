package agent

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The Docker executor (exec-docker): each session's agent runs in a
// container of its own, created when the session's agent launches (after
// its working directory and token file exist) and removed when the run
// ends, however it ends (stopped, cancelled, archived, deleted, failed,
// the backend shutting down). The working directory is mounted
// read-write at its own path (the agent's cwd, so paths the agent reports
// are the host's), the kandev binary read-only at docker.BinaryPath and
// the session's token file read-only at docker.TokenPath; the agent's own
// `kandev mcp` runs from there and reaches the backend over loopback
// (network host). Containers are labelled with a digest of the data dir:
// the ones a previous process of this data dir left are removed when the
// runtime starts, before any launch.

// box is a run's container.
type box struct {
	c  *docker.Client
	id string
}

// dockerTimeout bounds the sweep at start and each container removal.
const dockerTimeout = 2 * time.Minute

// ContainerOwner is the dev.kandev.owner label value of the containers
// of the data dir dataDir (as the filesystem policy resolved it).
func ContainerOwner(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return hex.EncodeToString(sum[:8])
}

// sweepContainers removes the containers a previous process of this data
// dir left (none of this process's runs has one yet) and then lets
// launches create theirs.
func (m *Manager) sweepContainers() {
	defer close(m.dockerReady)
	if m.cfg.Docker == nil || m.cfg.Guard == nil || m.cfg.Guard.DataDir() == "" {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, dockerTimeout)
	defer cancel()
	n, err := m.cfg.Docker.Sweep(ctx, docker.LabelManaged+"=true", docker.LabelOwner+"="+ContainerOwner(m.cfg.Guard.DataDir()))
	switch {
	case err != nil:
		m.log.Debug("sweep stale agent containers", "err", err) // no daemon here is the common case
	case n > 0:
		m.log.Info("removed agent containers a previous process left", "count", n)
	}
}

// placement reads the session's executor and the agent's environment into
// l and returns the kind of working directory it runs in (an executor type
// of workdirs.prepare). A Docker profile's config is checked again here
// (rows may predate the rules).
func (r *run) placement(ctx context.Context, sess *kanban.Session, l *launch) (string, error) {
	execType, err := r.executor(ctx, sess, l)
	if err != nil {
		return "", err
	}
	if execType == kanban.ExecutorTypeSSH {
		return r.sshPlacement(l)
	}
	if execType != kanban.ExecutorTypeDocker {
		l.env, err = r.launchEnv(l)
		return execType, err
	}
	if r.m.cfg.Docker == nil {
		return "", errors.New("the Docker executor needs the docker CLI on the backend's PATH")
	}
	if l.docker, err = kanban.ParseDockerConfig(l.executor.Config); err != nil {
		return "", fmt.Errorf("the Docker executor profile's config is invalid: %w", err)
	}
	if l.env, err = r.launchEnv(l); err != nil {
		return "", err
	}
	if l.docker.Workdir == "task" {
		return executorLocal, nil
	}
	return executorWorktree, nil
}

// launchEnv is the agent's environment: for a local agent, the backend's
// through the allow-list; in a container, only the profile's env and the
// pass_env variables (through the same allow-list), and HOME=/tmp unless
// set: nothing else of the host's.
func (r *run) launchEnv(l *launch) ([]string, error) {
	if l.docker == nil {
		return r.m.typeEnv(&l.typ, l.model), nil
	}
	vars := map[string]string{"HOME": "/tmp"}
	for k, v := range l.typ.Env { // the agent type's own variables (server-side agents file)
		vars[k] = v
	}
	if l.model != "" && l.typ.ModelVar != "" {
		vars[l.typ.ModelVar] = l.model
	}
	for k, v := range l.docker.Env {
		vars[k] = v
	}
	for _, k := range l.docker.PassEnv {
		if !EnvPassed(k, r.m.cfg.EnvAllow) {
			return nil, errors.New("the Docker profile's pass_env names a variable the agents' environment allow-list does not pass")
		}
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	out := make([]string, 0, len(vars))
	for _, k := range sortedKeys(vars) {
		out = append(out, k+"="+vars[k])
	}
	return out, nil
}

// startContainer creates the run's container (Docker executor only).
func (r *run) startContainer(l *launch) error {
	if l.docker == nil {
		return nil
	}
	select {
	case <-r.m.dockerReady:
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
	spec, err := r.containerSpec(l)
	if err != nil {
		return err
	}
	c := r.m.cfg.Docker
	id, err := c.Create(r.ctx, spec)
	if err != nil {
		r.m.log.WarnContext(r.ctx, "create the session's container", "err", err)
		return containerError(err)
	}
	r.box = &box{c: c, id: id}
	r.rec.note("status", "Started the session's container (image "+kanban.Clip(l.docker.Image, 100)+", network "+l.docker.Network+").")
	return nil
}

// containerError is what an operator is shown of a failed docker run:
// its cause in Kandev's words, the CLI's text in the server log.
func containerError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Unable to find image"), strings.Contains(msg, "No such image"):
		return errors.New("the Docker profile's image is not on the Docker daemon (the executor never pulls: build or load it there)")
	case strings.Contains(msg, "Cannot connect to the Docker daemon"), strings.Contains(msg, "no answer within"):
		return errors.New("the Docker daemon did not answer (see DOCKER_HOST and the server log)")
	}
	return errors.New("docker could not create the session's container (see the server log)")
}

// containerSpec is the run's container: every host path checked (mount
// sources against the source roots, again at launch), the kandev binary a
// static one.
func (r *run) containerSpec(l *launch) (docker.Spec, error) {
	bin, err := filepath.EvalSymlinks(r.m.cfg.Executable)
	if err != nil || !staticBinary(bin) {
		return docker.Spec{}, errors.New("the Docker executor needs a static kandev binary (built with CGO_ENABLED=0)")
	}
	spec := docker.Spec{
		Name: "kandev-" + r.id, Image: l.docker.Image, Network: l.docker.Network, CPUs: l.docker.CPUs,
		MemoryMB: l.docker.MemoryMB, User: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), Workdir: l.workdir,
		Binary: bin, TokenFile: l.tokenFile, Env: map[string]string{},
		Labels: map[string]string{docker.LabelManaged: "true", docker.LabelOwner: ContainerOwner(r.m.cfg.Guard.DataDir()),
			docker.LabelSession: r.id, docker.LabelTask: l.task.ID},
	}
	for _, kv := range l.env {
		k, v, _ := strings.Cut(kv, "=")
		spec.Env[k] = v
	}
	for i, m := range l.docker.Mounts {
		d, err := r.m.cfg.Guard.SourceDir(fmt.Sprintf("mount %d of the Docker profile", i+1), m.Source)
		if err != nil {
			return docker.Spec{}, err
		}
		if why := kanban.DockerSourceProblem(d.Path); why != "" {
			return docker.Spec{}, fmt.Errorf("mount %d of the Docker profile: the source %s", i+1, why)
		}
		if overlapsPath(m.Target, l.workdir) {
			return docker.Spec{}, fmt.Errorf("mount %d of the Docker profile overlaps the session's working directory", i+1)
		}
		spec.Mounts = append(spec.Mounts, docker.Mount{Source: d.Path, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	if !kanban.MountSafe(l.workdir) || !kanban.MountSafe(bin) || !kanban.MountSafe(l.tokenFile) {
		return docker.Spec{}, errors.New("the working directory, the data dir or the kandev binary's path holds a comma, quote or control character, which docker cannot mount")
	}
	return spec, nil
}

// overlapsPath reports whether a and b are the same path or one lies in
// the other.
func overlapsPath(a, b string) bool {
	within := func(x, y string) bool { return strings.HasPrefix(x, strings.TrimSuffix(y, "/")+"/") }
	return a == b || within(a, b) || within(b, a)
}

// staticBinary reports whether path is an ELF executable with no
// interpreter (it runs in any container, an empty one included).
func staticBinary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// removeContainer removes the run's container, and with it whatever still
// runs in it.
func (r *run) removeContainer() {
	if r.box == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.keep(), dockerTimeout)
	defer cancel()
	if err := r.box.c.Remove(ctx, r.box.id); err != nil {
		r.m.log.ErrorContext(r.ctx, "remove the session's container", "err", err)
	}
	r.box = nil
}
