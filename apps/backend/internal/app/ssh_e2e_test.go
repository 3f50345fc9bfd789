package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/sshtest"
)

// sshProfile creates a profile of exec-ssh as the operator.
func (e *env) sshProfile(name string, cfg map[string]any, prepare, cleanup string) string {
	e.t.Helper()
	var p kanban.ExecutorProfile
	e.dispatch(kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": dbStr(e, `SELECT id FROM executors WHERE name = 'exec-ssh'`),
		"name": name, "config": cfg, "prepare_script": prepare, "cleanup_script": cleanup}, &p)
	return p.ID
}

// waitPathGone waits until path no longer exists (on the SSH host, which is
// this machine).
func waitPathGone(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for {
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there after %s", path, agentWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSSHExecutor: an exec-ssh session runs the mock agent on a real sshd
// (on loopback, so the host's files are this machine's): the repository is
// cloned into the session's directory under the work root, the agent runs
// there with ACP over the SSH session, its tool call reaches Kandev
// through the uploaded `kandev mcp` and the remote-forwarded port, the
// token sits 0600 on the host and on no command line; prepare and cleanup
// scripts run on the host; when the session is archived (and when an
// agent exits) the agent's processes are gone and the session's
// directory removed; a commit the agent makes there comes back onto the
// task's branch. A host whose key differs from the known_hosts file's
// is refused, saying so, with nothing made on it.
func TestSSHExecutor(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	e := newAgentEnv(t)
	root := filepath.Join(t.TempDir(), "root")
	out := t.TempDir()
	repo := gitRepo(t)
	prof := e.sshProfile("loopback", s.Config(root),
		`pwd > `+out+`/prepared.txt && ls README.md >> `+out+`/prepared.txt && echo "$KANDEV_WORKDIR" >> `+out+`/prepared.txt`,
		`pwd > `+out+`/cleanup.txt`)
	prompt := strings.Join([]string{
		`@tool create_task_kandev {"title":"Subtask from an SSH host","parent_id":"self","start_agent":false}`,
		"@sh pwd; ls README.md; git rev-parse --abbrev-ref HEAD",
		"@sleep 60000",
	}, "\n")
	task, sid := e.startMock("SSH task", prompt, map[string]any{"local_path": repo, "executor_profile_id": prof})
	tc := e.waitMessage(task.ID, "tool_call", `"status":"completed"`)
	var call struct{ Title, Output string }
	if err := json.Unmarshal([]byte(tc.Content), &call); err != nil || call.Title != "create_task_kandev" || !strings.Contains(call.Output, "Subtask from an SSH host") {
		t.Fatalf("tool call record %s (err %v)", tc.Content, err)
	}
	var subs kanban.List[kanban.Task]
	e.dispatch(kanban.ActionTaskList, action.TaskListIn{ParentID: task.ID}, &subs)
	if len(subs.Items) != 1 || subs.Items[0].Title != "Subtask from an SSH host" {
		t.Fatalf("subtasks %+v", subs.Items)
	}
	dir := filepath.Join(root, "kandev-"+sid)
	work := filepath.Join(dir, "work")
	sh := e.waitMessage(task.ID, "tool_call", work) // in the output only, not in the command
	if !strings.Contains(sh.Content, `"output":"`) || !strings.Contains(sh.Content, `README.md`) || !strings.Contains(sh.Content, "kandev/") {
		t.Fatalf("@sh did not run in the clone of the task's branch on the host: %s", sh.Content)
	}
	e.waitState(sid, kanban.SessionRunning)
	e.waitMessage(task.ID, "status", "Connected to the SSH host 127.0.0.1")
	if b, err := os.ReadFile(filepath.Join(out, "prepared.txt")); err != nil || string(b) != work+"\nREADME.md\n"+work+"\n" {
		t.Fatalf("prepare script output %q (%v)", b, err)
	}
	pid := checkHostSession(t, dir, sid)

	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: task.ID}, nil)
	e.waitState(sid, kanban.SessionCancelled)
	waitPathGone(t, dir)
	waitGroupGone(t, pid)
	if b, err := os.ReadFile(filepath.Join(out, "cleanup.txt")); err != nil || string(b) != work+"\n" {
		t.Fatalf("cleanup script output %q (%v)", b, err)
	}

	sshSessionEnds(t, e, s, root, repo, prof)
}

// sshSessionEnds: on exec-ssh, an agent that exits (on a task with no
// repository), one that commits (the commit comes back), and a host whose
// key is not the recorded one.
func sshSessionEnds(t *testing.T, e *env, s *sshtest.Server, root, repo, prof string) {
	t.Helper()
	// An agent that exits, on a task with no repository (workdir task: an
	// empty directory on the host): COMPLETED, its directory removed.
	taskCfg := s.Config(root)
	taskCfg["workdir"] = "task"
	task2, sid2 := e.startMock("SSH exit", "@sh pwd; ls -A | wc -l\n@exit 0", map[string]any{"executor_profile_id": e.sshProfile("task-dir", taskCfg, "", "")})
	e.waitState(sid2, kanban.SessionCompleted)
	e.waitMessage(task2.ID, "tool_call", filepath.Join(root, "kandev-"+sid2, "work"))
	waitPathGone(t, filepath.Join(root, "kandev-"+sid2))

	// An agent that commits on the host: its commit comes back onto the
	// task's branch in the local worktree.
	task4, sid4 := e.startMock("SSH commit", "@sh git -c user.name=k -c user.email=k@example.com commit -q --allow-empty -m from-the-host\n@exit 0",
		map[string]any{"local_path": repo, "executor_profile_id": prof})
	done := e.waitState(sid4, kanban.SessionCompleted)
	e.waitMessage(task4.ID, "status", "Brought the agent's commits back from the SSH host onto kandev/")
	if got := gitOut(t, done.Workdir, "log", "-1", "--format=%s"); strings.TrimSpace(got) != "from-the-host" {
		t.Fatalf("the local worktree's last commit is %q, want the agent's from the host", got)
	}

	// A host whose key is not the recorded one: refused, nothing made there.
	cfg := s.Config(root)
	cfg["known_hosts_file"] = s.WrongKnownHosts(t)
	wrong := e.sshProfile("wrong-key", cfg, "", "")
	_, sid3 := e.startMock("SSH wrong key", "@say never", map[string]any{"local_path": repo, "executor_profile_id": wrong})
	if st := e.waitState(sid3, kanban.SessionFailed); !strings.Contains(st.Error, "the host's key differs from the one the known_hosts file records") {
		t.Fatalf("wrong host key: got error %q", st.Error)
	}
	if _, err := os.Lstat(filepath.Join(root, "kandev-"+sid3)); !os.IsNotExist(err) {
		t.Fatalf("a refused host got the session's directory (%v)", err)
	}
}

// checkHostSession checks the session's directory on the host while its
// agent runs: 0700, the token 0600 and on no process's command line, the
// agent's process group recorded and alive; it returns that group.
func checkHostSession(t *testing.T, dir, sid string) int {
	t.Helper()
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("session directory on the host: %v %v, want mode 0700", st, err)
	}
	tok, err := os.ReadFile(filepath.Join(dir, "token"))
	if st, serr := os.Stat(filepath.Join(dir, "token")); err != nil || serr != nil || st.Mode().Perm() != 0o600 || len(strings.TrimSpace(string(tok))) < 16 {
		t.Fatalf("token file on the host: %v %v", err, serr)
	}
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	sawBridge := false
	for _, p := range procs {
		b, err := os.ReadFile(p) //nolint:gosec // /proc
		if err != nil {
			continue
		}
		if strings.Contains(string(b), strings.TrimSpace(string(tok))) {
			t.Fatalf("the session token is on a command line: %s", p)
		}
		if strings.Contains(string(b), "mcp\x00--backend\x00http://127.0.0.1:") && strings.Contains(string(b), sid) &&
			strings.Contains(string(b), filepath.Join(dir, "token")) {
			sawBridge = true
		}
	}
	if !sawBridge {
		t.Fatal("no kandev mcp of the session runs from the host's token file")
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || syscall.Kill(-pid, 0) != nil {
		t.Fatalf("the agent's process group on the host: %q %v %v", b, err, perr)
	}
	return pid
}

// waitGroupGone waits until no process of group pgid is left.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the agent's group %d still run after %s", pgid, agentWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSSHShutdownAndResume: a backend that shuts down kills its SSH
// session's agent and removes the session's directory on the host; the
// next start resumes the session on the host in a directory made afresh.
func TestSSHShutdownAndResume(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	dir := t.TempDir()
	opts := func(c *Config) { c.DataDir = dir }
	e1 := newAgentEnv(t, opts)
	root := filepath.Join(t.TempDir(), "root")
	cfg := s.Config(root)
	cfg["workdir"] = "task"
	prof := e1.sshProfile("host", cfg, "", "")
	task, sid := e1.startMock("SSH resume", "@say before the restart", map[string]any{"executor_profile_id": prof})
	e1.waitState(sid, kanban.SessionIdle)
	hostDir := filepath.Join(root, "kandev-"+sid)
	b, err := os.ReadFile(filepath.Join(hostDir, "agent.pid"))
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		t.Fatalf("the agent's process group on the host: %q %v %v", b, err, perr)
	}
	e1.close()
	if _, err := os.Lstat(hostDir); !os.IsNotExist(err) {
		t.Fatalf("the session's directory on the host after the shutdown: %v, want it gone", err)
	}
	waitGroupGone(t, pid)

	e2 := newAgentEnv(t, opts)
	e2.waitMessage(task.ID, "status", "Resumed the agent's session")
	e2.waitState(sid, kanban.SessionIdle)
	if _, err := os.Stat(filepath.Join(hostDir, "agent.pid")); err != nil {
		t.Fatalf("the resumed session runs on the host: %v", err)
	}
}
