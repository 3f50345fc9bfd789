package packaging

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/app"
	"github.com/kandev/kandev/apps/backend/internal/dockertest"
)

// TestContainerImage: `make image` builds the Dockerfile's image (FROM
// scratch, no registry) on a real Docker daemon; the container, run on
// the host network as an operator would (so the backend's loopback
// checks hold), reports healthy through its own HEALTHCHECK (kandev
// healthcheck), runs as user 10001 with its data on the /data volume
// (the operator token file there is the container user's), and serves
// /mcp to the token read from that volume: tools/list answers, a request
// without the token is 401 and one naming a foreign Host is 403.
// `docker exec … kandev token` prints the same token. A second container
// with the image's defaults (0.0.0.0:38429) on a network of its own turns
// healthy too. The containers, their volumes and the image are removed
// after.
func TestContainerImage(t *testing.T) {
	t.Parallel()
	d := dockertest.Require(t)
	var env []string
	if d.Host != "" {
		env = append(env, "DOCKER_HOST="+d.Host)
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	image, name := "kandev-test/kandev:"+stamp, "kandev-image-test-"+stamp
	const version = "v0.0.2-image-test"
	run(t, 15*time.Minute, moduleRoot(t), env, "make", "image", "BIN="+t.TempDir(), "IMAGE="+image, "VERSION="+version)
	cleanup(t, env, "docker", "rmi", image)

	cfg := inspect[struct {
		User        string
		Volumes     map[string]any
		Healthcheck struct{ Test []string }
	}](t, env, "{{json .Config}}", image)
	if cfg.User != "10001:10001" || cfg.Volumes["/data"] == nil || len(cfg.Healthcheck.Test) < 2 || cfg.Healthcheck.Test[1] != "/usr/local/bin/kandev" {
		t.Fatalf("image config: got %+v, want user 10001:10001, volume /data and kandev healthcheck", cfg)
	}
	addr := freeLoopback(t)
	run(t, time.Minute, "", env, "docker", "run", "-d", "--name", name, "--network", "host",
		"--health-interval", "1s", "--health-start-period", "30s", "-e", "KANDEV_ADDR="+addr, image)
	cleanup(t, env, "docker", "rm", "-f", "-v", name)
	waitHealthy(t, env, name, 90*time.Second)

	tok, uid := tokenFromVolume(t, env, name)
	if uid != 10001 {
		t.Fatalf("token file owner: got uid %d, want 10001", uid)
	}
	if out := run(t, time.Minute, "", env, "docker", "exec", name, "kandev", "token"); strings.TrimSpace(out) != tok {
		t.Fatalf("docker exec kandev token: got %q, want the volume's token", out)
	}
	url := "http://" + addr
	if code := post(t, url+"/mcp", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("/mcp without the token: got %d, want 401", code)
	}
	if code := post(t, url+"/mcp", tok, "evil.example:80"); code != http.StatusForbidden {
		t.Fatalf("/mcp naming a foreign Host: got %d, want 403", code)
	}
	listTools(t, url+"/mcp", tok, version)

	// The image's own defaults (0.0.0.0:38429, the healthcheck asking
	// loopback), on a network namespace of the container's own.
	run(t, time.Minute, "", env, "docker", "run", "-d", "--name", name+"-defaults", "--network", "none", "--health-interval", "1s", image)
	cleanup(t, env, "docker", "rm", "-f", "-v", name+"-defaults")
	waitHealthy(t, env, name+"-defaults", 90*time.Second)
}

// inspect decodes docker inspect's rendering of format for obj.
func inspect[T any](t *testing.T, env []string, format, obj string) T {
	t.Helper()
	var v T
	out := run(t, time.Minute, "", env, "docker", "inspect", "--format", format, obj)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("docker inspect %s: %v: %s", obj, err, out)
	}
	return v
}

// waitHealthy waits, bounded, for the container's healthcheck to pass.
func waitHealthy(t *testing.T, env []string, name string, limit time.Duration) {
	t.Helper()
	type state struct {
		Status string
		Health *struct{ Status string }
	}
	start := time.Now()
	for time.Since(start) < limit {
		s := inspect[state](t, env, "{{json .State}}", name)
		switch {
		case s.Status != "running":
			logs, _ := runErr(t, time.Minute, "", env, "docker", "logs", name)
			t.Fatalf("container is %s before it was healthy; logs:\n%s", s.Status, logs)
		case s.Health != nil && s.Health.Status == "healthy":
			t.Logf("healthy after %s", time.Since(start).Round(100*time.Millisecond))
			return
		case s.Health != nil && s.Health.Status == "unhealthy":
			logs, _ := runErr(t, time.Minute, "", env, "docker", "logs", name)
			t.Fatalf("container reported unhealthy; logs:\n%s", logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("container not healthy within %s", limit)
}

// tokenFromVolume reads the operator token file from the container's
// data volume (docker cp streams it as a tar) and its owner's uid.
func tokenFromVolume(t *testing.T, env []string, name string) (string, int) {
	t.Helper()
	out := run(t, time.Minute, "", env, "docker", "cp", name+":"+filepath.Join("/data", app.TokenFile), "-")
	tr := tar.NewReader(strings.NewReader(out))
	h, err := tr.Next()
	if err != nil {
		t.Fatalf("docker cp of the token file: %v", err)
	}
	b, err := io.ReadAll(io.LimitReader(tr, 4096))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b)), h.Uid
}

// post sends an MCP initialize to url with the token (if any) and Host
// header (if any) and returns the status.
func post(t *testing.T, url, tok, host string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// listTools initializes an MCP session at url with the operator token,
// wants the server to report version, and lists its tools.
func listTools(t *testing.T, url, tok, version string) {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "packaging-test", Version: "1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if init.ServerInfo.Version != version {
		t.Fatalf("server version: got %q, want %q", init.ServerInfo.Version, version)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: got %v tools, err %v; want some", tools, err)
	}
	t.Logf("/mcp in the container lists %d tools", len(tools.Tools))
}

// freeLoopback is a loopback address nothing listened on a moment ago.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return a
}
