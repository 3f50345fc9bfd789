package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// errPprofAddr refuses --pprof on an address other people can reach: the
// profiles show the server's code paths and timings, unauthenticated.
var errPprofAddr = errors.New("--pprof needs a loopback address (127.0.0.1, [::1] or localhost): the profile endpoint is unauthenticated")

// servePprof serves Go's runtime profiles (net/http/pprof under
// /debug/pprof/) on their own loopback listener until ctx ends, so
// `make bench` can profile a running backend under load. It returns once
// listening, having printed "profiles on http://ADDR/debug/pprof/" to out.
// The API listener never serves them.
func (b *backend) servePprof(ctx context.Context, addr string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof listen: %w", err)
	}
	if !isLoopback(ln.Addr()) {
		_ = ln.Close()
		return errPprofAddr
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	// A CPU profile runs for as long as the caller asks (?seconds=N, at
	// most the write timeout).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(ln) }() // ends with Close below
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	b.log.Warn("profile endpoint enabled: unauthenticated, loopback only, for benchmarks", "addr", ln.Addr().String())
	_, err = fmt.Fprintf(out, "profiles on http://%s/debug/pprof/\n", ln.Addr())
	return err
}
