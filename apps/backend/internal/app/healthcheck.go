package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheckCmd asks the backend listening at --addr for /healthz and
// fails unless it answers {"status":"ok"} within --timeout. It is the
// container image's HEALTHCHECK (a scratch image has no curl) and works
// for any supervisor. An unspecified listen address (0.0.0.0, ::) is
// asked on loopback, where the backend serving it also listens.
func healthcheckCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kandev healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("KANDEV_ADDR", "127.0.0.1:38429"), "the backend's listen address (env KANDEV_ADDR)")
	timeout := fs.Duration("timeout", 5*time.Second, "longest the check waits for the answer (at most 1m)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *timeout <= 0 || *timeout > time.Minute {
		return errors.New("healthcheck: --timeout must be between 1ns and 1m")
	}
	target, err := healthAddr(*addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := checkHealth(ctx, target); err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	_, err = fmt.Fprintln(stdout, "ok")
	return err
}

// healthAddr is the host:port to ask: a listen address with an
// unspecified host is asked on loopback.
func healthAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", errors.New("healthcheck: --addr must be HOST:PORT")
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port), nil
}

// checkHealth gets http://target/healthz and wants 200 {"status":"ok"}.
func checkHealth(ctx context.Context, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target+"/healthz", nil)
	if err != nil {
		return errors.New("bad address")
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return fmt.Errorf("no answer: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&body); err != nil || body.Status != "ok" {
		return errors.New("the answer is not {\"status\":\"ok\"}")
	}
	return nil
}
