package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Config configures a run.
type Config struct {
	KandevBin string // the kandev binary under test
	BenchBin  string // this program (for its floor-server subcommand)
	WorkDir   string // scratch space: data dirs and child logs
	Reps      int
	// MicroReps is the repetitions of each micro benchmark (section 1):
	// more and shorter than Reps, as those ratios are small and noisy.
	MicroReps int
	Point     float64 // seconds of measuring per load point
	BenchTime string  // testing.Benchmark time per micro benchmark
	Clients   []int
	// BridgeClients are the client counts of the bridge comparison.
	BridgeClients []int
	StoreTasks    int
	StoreWriters  int
	Logf          func(format string, args ...any)
}

var (
	floorBanner  = regexp.MustCompile(`floor serving on (http://\S+/mcp)`)
	serveBanner  = regexp.MustCompile(`serving on (http://[0-9.:\[\]a-z]+)`)
	bridgeBanner = regexp.MustCompile(`kandev mcp serving on (http://\S+/mcp)`)
)

// backendProc is a running `kandev serve`.
type backendProc struct {
	*proc
	base  string // http://HOST:PORT
	token string // operator token
}

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	return hex.EncodeToString(b[:])
}

// startBackend runs `kandev serve` on a fresh port with dataDir. It
// launches no agents: the API figures measure the API.
func startBackend(ctx context.Context, cfg Config, name, dataDir string) (*backendProc, error) {
	return startBackendWith(ctx, cfg, name, dataDir, "--launch-agents=false")
}

// startBackendWith is startBackend with extra serve flags (agents launch
// unless the flags say otherwise).
func startBackendWith(ctx context.Context, cfg Config, name, dataDir string, flags ...string) (*backendProc, error) {
	return startBackendToken(ctx, cfg, name, dataDir, newToken(), flags...)
}

// startBackendToken is startBackendWith with a given operator token (the
// backends of one database share it).
func startBackendToken(ctx context.Context, cfg Config, name, dataDir, tok string, flags ...string) (*backendProc, error) {
	p, base, err := startProc(ctx, procSpec{
		name: name, bin: cfg.KandevBin, dir: cfg.WorkDir, logDir: cfg.WorkDir,
		// No rate limits: the figures measure what the backend can serve.
		args:   append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--rate-calls=0", "--rate-writes=0"}, flags...),
		env:    []string{"KANDEV_TOKEN=" + tok},
		banner: serveBanner,
	})
	if err != nil {
		return nil, err
	}
	return &backendProc{proc: p, base: base, token: tok}, nil
}

// startBridge creates a session on b and runs `kandev mcp --listen` for it.
func startBridge(ctx context.Context, cfg Config, b *backendProc) (*proc, string, error) {
	out, err := runCmd(ctx, cfg.WorkDir, []string{"KANDEV_TOKEN=" + b.token}, cfg.KandevBin,
		"session", "create", "--title", "Benchmark bridge session", "--backend", b.base)
	if err != nil {
		return nil, "", err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			kv[k] = v
		}
	}
	if kv["session_id"] == "" || kv["token"] == "" {
		return nil, "", fmt.Errorf("session create: unexpected output %q", out)
	}
	return startProc(ctx, procSpec{
		name: "bridge", bin: cfg.KandevBin, dir: cfg.WorkDir, logDir: cfg.WorkDir,
		args:   []string{"mcp", "--backend", b.base, "--session", kv["session_id"], "--listen", "127.0.0.1:0"},
		env:    []string{"KANDEV_SESSION_TOKEN=" + kv["token"]},
		banner: bridgeBanner,
	})
}

// mkdir creates dir under the work dir.
func mkdir(cfg Config, name string) (string, error) {
	d := filepath.Join(cfg.WorkDir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}
