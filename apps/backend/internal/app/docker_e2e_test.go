package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/dockertest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// newDockerEnv is a backend that runs agents, with the Docker executor on
// the test daemon, and the Docker profile config of image with an out/
// directory (in the source roots) mounted at /out.
func newDockerEnv(t *testing.T) (*env, *dockertest.Daemon, map[string]any, string) {
	t.Helper()
	d := dockertest.Require(t)
	img := d.Image(t)
	e := newAgentEnv(t, func(c *Config) { c.Agents.Docker = d.Client() })
	out := t.TempDir()
	cfg := map[string]any{"image": img, "network": "host", "cpus": 1, "memory_mb": 256,
		"env":    map[string]string{"PLAIN_SETTING": "plain-value"},
		"mounts": []map[string]any{{"source": out, "target": "/out"}}}
	return e, d, cfg, out
}

// dockerProfile creates a profile of exec-docker as the operator.
func (e *env) dockerProfile(name string, cfg map[string]any, prepare, cleanup string) string {
	e.t.Helper()
	var p kanban.ExecutorProfile
	e.dispatch(kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": dbStr(e, `SELECT id FROM executors WHERE name = 'exec-docker'`),
		"name": name, "config": cfg, "prepare_script": prepare, "cleanup_script": cleanup}, &p)
	return p.ID
}

// dockerCLI runs the docker CLI on d and returns its trimmed output.
func dockerCLI(t *testing.T, d *dockertest.Daemon, args ...string) string {
	t.Helper()
	c := d.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, args...) //nolint:gosec // the test's docker CLI
	cmd.Env = c.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v: %s", args[0], err, out)
	}
	return strings.TrimSpace(string(out))
}

// sessionContainers lists the containers (running or not) of a session.
func sessionContainers(t *testing.T, d *dockertest.Daemon, sessionID string) []string {
	t.Helper()
	return strings.Fields(dockerCLI(t, d, "ps", "-a", "-q", "--filter", "label="+docker.LabelSession+"="+sessionID))
}

// waitNoContainer waits until the session's container is gone.
func waitNoContainer(t *testing.T, d *dockertest.Daemon, sessionID string) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for len(sessionContainers(t, d, sessionID)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the session's container is still there after %s", agentWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDockerExecutor: an exec-docker session runs the mock agent in a
// container of its own (the test image: busybox and a marker file, no
// kandev binary but the mounted one) on the task's git worktree; its tool
// call reaches Kandev through the `kandev mcp` bridge mounted in; its @sh
// runs inside the container; prepare and cleanup scripts run inside with
// the profile's env and mount; the container has no privilege, only the
// profile's env and read-only Kandev mounts; it is gone after the agent
// exits, and after an archive stops a live one.
func TestDockerExecutor(t *testing.T) {
	t.Parallel()
	e, d, cfg, out := newDockerEnv(t)
	repo := gitRepo(t)
	prof := e.dockerProfile("busybox", cfg,
		`cat /etc/kandev-test-image > /out/prepared.txt && echo "$PLAIN_SETTING $KANDEV_WORKDIR" >> /out/prepared.txt`,
		`cat /etc/kandev-test-image > /out/cleanup.txt`)
	prompt := strings.Join([]string{
		`@tool create_task_kandev {"title":"Subtask from a container","parent_id":"self","start_agent":false}`,
		"@sh cat /etc/kandev-test-image; test -e /kandev/bin/kandev && echo has-kandev; ls README.md",
		"@sleep 60000",
	}, "\n")
	task, sid := e.startMock("Docker task", prompt, map[string]any{"local_path": repo, "executor_profile_id": prof})
	tc := e.waitMessage(task.ID, "tool_call", `"status":"completed"`)
	var call struct{ Title, Output string }
	if err := json.Unmarshal([]byte(tc.Content), &call); err != nil || call.Title != "create_task_kandev" || !strings.Contains(call.Output, "Subtask from a container") {
		t.Fatalf("tool call record %s (err %v)", tc.Content, err)
	}
	var subs kanban.List[kanban.Task]
	e.dispatch(kanban.ActionTaskList, action.TaskListIn{ParentID: task.ID}, &subs)
	if len(subs.Items) != 1 || subs.Items[0].Title != "Subtask from a container" {
		t.Fatalf("subtasks %+v", subs.Items)
	}
	e.waitMessage(task.ID, "tool_call", "has-kandev")
	sh := e.waitMessage(task.ID, "tool_call", "kandev test image")
	if !strings.Contains(sh.Content, "README.md") {
		t.Fatalf("@sh did not run in the worktree: %s", sh.Content)
	}
	s := e.waitState(sid, kanban.SessionRunning)
	if !strings.Contains(s.Workdir, filepath.Join("worktrees", "")) {
		t.Fatalf("workdir %q is not the task's worktree", s.Workdir)
	}
	prepared, err := os.ReadFile(filepath.Join(out, "prepared.txt"))
	if err != nil || string(prepared) != dockertest.ImageMarkerText+"plain-value "+s.Workdir+"\n" {
		t.Fatalf("prepare script output %q (%v)", prepared, err)
	}
	ids := sessionContainers(t, d, sid)
	if len(ids) != 1 {
		t.Fatalf("got %d containers of the session, want 1", len(ids))
	}
	checkContainerLocked(t, d, ids[0], s.Workdir)

	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: task.ID}, nil)
	e.waitState(sid, kanban.SessionCancelled)
	waitNoContainer(t, d, sid)

	// An agent that exits: COMPLETED, the cleanup script ran inside, the
	// container removed.
	task2, sid2 := e.startMock("Docker exit", "@say bye\n@exit 0", map[string]any{"local_path": repo, "executor_profile_id": prof})
	e.waitState(sid2, kanban.SessionCompleted)
	waitNoContainer(t, d, sid2)
	if b, err := os.ReadFile(filepath.Join(out, "cleanup.txt")); err != nil || string(b) != dockertest.ImageMarkerText {
		t.Fatalf("cleanup script output %q (%v)", b, err)
	}
	e.waitMessage(task2.ID, "status", "Started the session's container")

	// An image the daemon lacks is never pulled: the session fails, saying so.
	cfg["image"] = "kandev-test/missing:1"
	missing := e.dockerProfile("missing", cfg, "", "")
	_, sid3 := e.startMock("Docker missing image", "@say never", map[string]any{"local_path": repo, "executor_profile_id": missing})
	if s := e.waitState(sid3, kanban.SessionFailed); !strings.Contains(s.Error, "image is not on the Docker daemon (the executor never pulls") {
		t.Fatalf("missing image: got error %q", s.Error)
	}
	waitNoContainer(t, d, sid3)
}

// checkContainerLocked checks the container of a running session: not
// privileged, every capability dropped, no new privileges, the limits
// set, the Kandev mounts read-only and no daemon socket, only the
// profile's environment.
func checkContainerLocked(t *testing.T, d *dockertest.Daemon, id, workdir string) {
	t.Helper()
	var info []struct {
		HostConfig struct {
			Privileged  bool
			CapDrop     []string
			SecurityOpt []string
			NetworkMode string
			NanoCpus    int64
			Memory      int64
		}
		Config struct{ Env []string }
		Mounts []struct {
			Source, Destination string
			RW                  bool
		}
	}
	if err := json.Unmarshal([]byte(dockerCLI(t, d, "inspect", id)), &info); err != nil || len(info) != 1 {
		t.Fatalf("docker inspect: %v", err)
	}
	hc := info[0].HostConfig
	if hc.Privileged || !slices.Contains(hc.CapDrop, "ALL") || !slices.Contains(hc.SecurityOpt, "no-new-privileges") ||
		hc.NetworkMode != "host" || hc.NanoCpus != 1e9 || hc.Memory != 256<<20 {
		t.Fatalf("host config %+v", hc)
	}
	mounts := map[string]bool{}
	for _, m := range info[0].Mounts {
		if strings.Contains(m.Source, "docker.sock") {
			t.Fatalf("the daemon socket is mounted: %+v", m)
		}
		mounts[m.Destination] = m.RW
	}
	want := map[string]bool{docker.BinaryPath: false, docker.TokenPath: false, "/out": true, workdir: true}
	for dst, rw := range want {
		if got, ok := mounts[dst]; !ok || got != rw {
			t.Fatalf("mount %s: got present=%v rw=%v, want rw=%v (mounts %v)", dst, ok, got, rw, mounts)
		}
	}
	var names []string
	for _, kv := range info[0].Config.Env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	if fmt.Sprint(names) != "[HOME PLAIN_SETTING]" { // the image sets none
		t.Fatalf("container environment names %v, want only HOME and the profile's", names)
	}
}

// TestDockerShutdownAndSweep: a backend that shuts down removes its
// sessions' containers, and a backend that starts removes the containers a
// previous process of its data dir left (and no other data dir's) before
// the session it resumes gets a new container.
func TestDockerShutdownAndSweep(t *testing.T) {
	t.Parallel()
	d := dockertest.Require(t)
	img := d.Image(t)
	dir := t.TempDir()
	opts := func(c *Config) { c.DataDir, c.Agents.Docker = dir, d.Client() }
	e1 := newAgentEnv(t, opts)
	prof := e1.dockerProfile("box", map[string]any{"image": img, "workdir": "task"}, "", "")
	task, sid := e1.startMock("Docker resume", "@say before the restart", map[string]any{"executor_profile_id": prof})
	e1.waitState(sid, kanban.SessionIdle)
	if n := len(sessionContainers(t, d, sid)); n != 1 {
		t.Fatalf("got %d containers of the running session, want 1", n)
	}
	e1.close()
	if n := len(sessionContainers(t, d, sid)); n != 0 {
		t.Fatalf("got %d containers of the session after the shutdown, want 0", n)
	}

	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	plant := func(owner string) string {
		return dockerCLI(t, d, "run", "-d", "--label", docker.LabelManaged+"=true", "--label", docker.LabelOwner+"="+owner,
			"--mount", "type=bind,source="+kandevBinary(t)+",target="+docker.BinaryPath+",readonly",
			"--entrypoint", docker.BinaryPath, img, "agent", "hold")
	}
	stale, other := plant(agent.ContainerOwner(real)), plant("another-data-dir")
	t.Cleanup(func() { dockerCLI(t, d, "rm", "-f", other) })

	e2 := newAgentEnv(t, opts)
	e2.waitMessage(task.ID, "status", "Resumed the agent's session")
	e2.waitState(sid, kanban.SessionIdle)
	if n := len(sessionContainers(t, d, sid)); n != 1 {
		t.Fatalf("got %d containers of the resumed session, want 1", n)
	}
	left := dockerCLI(t, d, "ps", "-a", "-q", "--no-trunc", "--filter", "label="+docker.LabelOwner)
	if strings.Contains(left, stale) || !strings.Contains(left, other) {
		t.Fatalf("after the start sweep: containers %q; want the stale one gone and the other data dir's kept", left)
	}
}
