package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/dockertest"
)

// dockerSamples is how many Docker agents section 8 starts.
const dockerSamples = 10

// MeasureDockerAgents is section 8's Docker figure: the same create_task →
// first tool call, with an exec-docker profile (the busybox test image,
// network host, the task's directory), so each sample also creates the
// session's container and starts the mock agent in it with docker exec.
// Without a Docker daemon it returns a note instead of a figure.
func MeasureDockerAgents(ctx context.Context, cfg Config) (*LatencyStat, string, error) {
	d, err := dockertest.Start(ctx)
	if err != nil {
		return nil, "Docker first tool call not measured: " + err.Error(), nil
	}
	defer func() { _ = d.Stop() }()
	img, err := d.BuildImage(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("docker test image: %w", err)
	}
	dir, err := mkdir(cfg, "agents-docker")
	if err != nil {
		return nil, "", err
	}
	tok := newToken()
	env := []string{"KANDEV_TOKEN=" + tok}
	if d.Host != "" {
		env = append(env, "DOCKER_HOST="+d.Host)
	}
	p, base, err := startProc(ctx, procSpec{name: "agents-docker-backend", bin: cfg.KandevBin, dir: cfg.WorkDir, logDir: cfg.WorkDir,
		args: []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--max-agents", strconv.Itoa(dockerSamples + 1)},
		env:  env, banner: serveBanner})
	if err != nil {
		return nil, "", err
	}
	b := &backendProc{proc: p, base: base, token: tok}
	samples, err := dockerSamplesRun(ctx, b, img)
	b.stop()
	// The backend removes its containers as it stops; sweep what a
	// failed stop left, so the machine keeps none.
	sweepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if c := d.Client(); c != nil {
		_, _ = c.Sweep(sweepCtx, docker.LabelManaged+"=true")
	}
	if err != nil {
		return nil, "", err
	}
	st := Latency(samples)
	cfg.Logf("agents: Docker first tool call p50 %.1f ms p99 %.1f ms", st.P50Ms, st.P99Ms)
	return &st, "", nil
}

func dockerSamplesRun(ctx context.Context, b *backendProc, img string) ([]time.Duration, error) {
	sess, err := openSession(ctx, newHTTPClient(1), b.base+"/mcp", b.token)
	if err != nil {
		return nil, err
	}
	profile, err := mockProfile(ctx, sess)
	if err != nil {
		return nil, err
	}
	execProfile, err := executorProfile(ctx, sess, "exec-docker", map[string]any{"image": img, "network": "host", "workdir": "task"})
	if err != nil {
		return nil, err
	}
	events, closeEvents, err := watchCreated(ctx, b)
	if err != nil {
		return nil, err
	}
	defer closeEvents()
	return firstToolCalls(ctx, sess, events, dockerSamples, "Docker", map[string]any{"agent_profile_id": profile,
		"executor_profile_id": execProfile}, 60*time.Second)
}
