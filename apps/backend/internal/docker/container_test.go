package docker

import (
	"slices"
	"strings"
	"testing"
)

// TestCreateArgs: the docker run command line of a session's container
// holds no environment value but those the CLI itself reads, never pulls,
// drops every privilege, and mounts Kandev's files read-only.
func TestCreateArgs(t *testing.T) {
	s := Spec{Name: "kandev-s", Image: "img:1", Network: "none", User: "1000:1000", Workdir: "/data/worktrees/ab",
		Binary: "/opt/kandev", TokenFile: "/data/session-tokens/s", CPUs: 1.5, MemoryMB: 512,
		Env:    map[string]string{"API_KEY": "secret-value-1", "HOME": "/tmp"},
		Labels: map[string]string{LabelManaged: "true"}, Mounts: []Mount{{Source: "/src", Target: "/src", ReadOnly: true}}}
	args := createArgs(s)
	line := strings.Join(args, " ")
	for _, want := range []string{"--pull never", "--cap-drop ALL", "--security-opt no-new-privileges", "--network none",
		"--user 1000:1000", "--cpus 1.5", "--memory 512m", "-e API_KEY", "-e HOME=/tmp", "--init",
		"type=bind,source=/opt/kandev,target=" + BinaryPath + ",readonly",
		"type=bind,source=/data/session-tokens/s,target=" + TokenPath + ",readonly",
		"type=bind,source=/data/worktrees/ab,target=/data/worktrees/ab", "type=bind,source=/src,target=/src,readonly",
		"--entrypoint " + BinaryPath + " -- img:1 agent hold"} {
		if !strings.Contains(line, want) {
			t.Errorf("got %q, want it to hold %q", line, want)
		}
	}
	if strings.Contains(line, "secret-value-1") || slices.Contains(args, "--privileged") {
		t.Fatalf("got %q: a value on the command line, or privileged", line)
	}
	if env := valuesEnv(s.Env); !slices.Equal(env, []string{"API_KEY=secret-value-1"}) {
		t.Fatalf("got CLI environment %v, want the secret's value only there", env)
	}
	exec := (&Client{Path: "docker"}).Exec("c1", "/w", []string{"KANDEV_TASK_ID=t1"}, "sh", "-c", "x")
	if got := strings.Join(exec.Args, " "); got != "docker exec -i --workdir /w -e KANDEV_TASK_ID -- c1 sh -c x" ||
		!slices.Contains(exec.Env, "KANDEV_TASK_ID=t1") {
		t.Fatalf("got exec %q env %v", got, exec.Env)
	}
}
