package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/sshtest"
)

// sshSamples is how many SSH agents section 8 starts.
const sshSamples = 10

// MeasureSSHAgents is section 8's SSH figure: the same create_task →
// first tool call, with an exec-ssh profile on a real sshd on loopback
// (the task's directory), so each sample also connects and authenticates,
// checks the host key, makes the session's directory on the host, writes
// its token and env files there, forwards a port and starts the mock
// agent through an SSH session (the kandev binary is uploaded once, by
// the first sample). Without an sshd it returns a note instead of a
// figure.
func MeasureSSHAgents(ctx context.Context, cfg Config) (*LatencyStat, string, error) {
	dir, err := mkdir(cfg, "agents-ssh")
	if err != nil {
		return nil, "", err
	}
	keys := filepath.Join(dir, "sshd") // fresh keys each run
	if err := errors.Join(os.RemoveAll(keys), os.MkdirAll(keys, 0o700)); err != nil {
		return nil, "", err
	}
	s, err := sshtest.Start(ctx, keys)
	if err != nil {
		return nil, "SSH first tool call not measured: " + err.Error(), nil
	}
	defer s.Stop()
	tok := newToken()
	p, base, err := startProc(ctx, procSpec{name: "agents-ssh-backend", bin: cfg.KandevBin, dir: cfg.WorkDir, logDir: cfg.WorkDir,
		args: []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--max-agents", strconv.Itoa(sshSamples + 1)},
		env:  []string{"KANDEV_TOKEN=" + tok}, banner: serveBanner})
	if err != nil {
		return nil, "", err
	}
	b := &backendProc{proc: p, base: base, token: tok}
	hostCfg := s.Config(filepath.Join(dir, "host"))
	hostCfg["workdir"] = "task"
	samples, err := sshSamplesRun(ctx, b, hostCfg)
	b.stop()
	if err != nil {
		return nil, "", err
	}
	st := Latency(samples)
	cfg.Logf("agents: SSH first tool call p50 %.1f ms p99 %.1f ms", st.P50Ms, st.P99Ms)
	return &st, "", nil
}

func sshSamplesRun(ctx context.Context, b *backendProc, hostCfg map[string]any) ([]time.Duration, error) {
	sess, err := openSession(ctx, newHTTPClient(1), b.base+"/mcp", b.token)
	if err != nil {
		return nil, err
	}
	profile, err := mockProfile(ctx, sess)
	if err != nil {
		return nil, err
	}
	execProfile, err := executorProfile(ctx, sess, "exec-ssh", hostCfg)
	if err != nil {
		return nil, err
	}
	events, closeEvents, err := watchCreated(ctx, b)
	if err != nil {
		return nil, err
	}
	defer closeEvents()
	return firstToolCalls(ctx, sess, events, sshSamples, "SSH", map[string]any{"agent_profile_id": profile,
		"executor_profile_id": execProfile}, 60*time.Second)
}

// executorProfile creates a profile "bench" of the named executor over MCP.
func executorProfile(ctx context.Context, s *session, executor string, config map[string]any) (string, error) {
	var execs struct {
		Items []struct{ ID, Name string } `json:"items"`
	}
	body, err := s.call(ctx, "list_executors_kandev", json.RawMessage(`{}`))
	if err == nil {
		err = decodeStructured(body, &execs)
	}
	if err != nil {
		return "", err
	}
	for _, e := range execs.Items {
		if e.Name != executor {
			continue
		}
		args, _ := json.Marshal(map[string]any{"executor_id": e.ID, "name": "bench", "config": config})
		body, err := s.call(ctx, "create_executor_profile_kandev", args)
		if err != nil {
			return "", err
		}
		var p struct{ ID string }
		if err := decodeStructured(body, &p); err != nil || p.ID == "" {
			return "", errors.Join(fmt.Errorf("create the %s profile", executor), err)
		}
		return p.ID, nil
	}
	return "", errors.New("no " + executor + " executor")
}
