package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// env is a Getenv over a fixed map.
func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestOffByDefault: with no endpoint and no OTEL_* variable, tracing is
// the no-op provider: no exporter, no goroutine, spans that record
// nothing, and a shutdown with nothing to do.
func TestOffByDefault(t *testing.T) {
	before := runtime.NumGoroutine()
	tr, err := New(context.Background(), Config{BackendID: "b1", Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() {
		t.Fatal("tracing is on without an endpoint")
	}
	_, span := tr.Provider.Tracer("t").Start(context.Background(), "x")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("the off provider made a real span")
	}
	span.End()
	if after := runtime.NumGoroutine(); after != before {
		t.Errorf("goroutines: got %d, want %d (off tracing starts none)", after, before)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	// OTEL_SDK_DISABLED wins over an endpoint.
	tr, err = New(context.Background(), Config{Endpoint: "http://127.0.0.1:4318", Getenv: env(map[string]string{"OTEL_SDK_DISABLED": "true"})})
	if err != nil || tr.Enabled() {
		t.Errorf("OTEL_SDK_DISABLED=true: enabled %v, err %v; want off", tr.Enabled(), err)
	}
}

// TestBadEndpoint: an endpoint that is no http(s) URL is refused, and the
// message does not repeat it (it may carry credentials).
func TestBadEndpoint(t *testing.T) {
	for _, u := range []string{"ftp://secret-host:4318", "127.0.0.1:4318", "http://", "https:///path", "http://" + strings.Repeat("a", 2050)} {
		_, err := New(context.Background(), Config{Endpoint: u, Getenv: env(nil)})
		if err == nil {
			t.Errorf("endpoint %.30q accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "secret-host") || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("the error repeats the endpoint: %v", err)
		}
	}
}

// receiver is an in-test OTLP/HTTP collector: it decodes each export
// request with the OTLP protobuf types.
type receiver struct {
	mu    sync.Mutex
	spans map[string]map[string]string // span name → its resource's attributes
	paths []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	var req coltrace.ExportTraceServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths = append(rc.paths, r.URL.Path)
	for _, rs := range req.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				rc.spans[sp.GetName()] = res
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// TestExportsOverOTLP: with --otlp-endpoint (and, separately, with
// OTEL_EXPORTER_OTLP_ENDPOINT) spans reach an OTLP/HTTP receiver at
// /v1/traces once Shutdown flushes the batch, with the resource
// service.name kandev and the backend's id.
func TestExportsOverOTLP(t *testing.T) {
	for name, cfg := range map[string]func(url string) Config{
		"flag": func(u string) Config {
			return Config{Endpoint: u, BackendID: "backend-1", Version: "v9", Getenv: env(nil)}
		},
		"env": func(u string) Config {
			return Config{BackendID: "backend-1", Version: "v9", Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u})}
		},
	} {
		t.Run(name, func(t *testing.T) {
			rc := &receiver{spans: map[string]map[string]string{}}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			// The exporter reads OTEL_* itself: point the env case at srv.
			c := cfg(srv.URL)
			if c.Endpoint == "" {
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
			}
			tr, err := New(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Enabled() {
				t.Fatal("tracing is off with an endpoint")
			}
			_, span := tr.Provider.Tracer("t").Start(context.Background(), "exported-span")
			span.End()
			start := time.Now()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			if d := time.Since(start); d > ShutdownWait+time.Second {
				t.Errorf("shutdown took %s, past its bound %s", d, ShutdownWait)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			res, ok := rc.spans["exported-span"]
			if !ok {
				t.Fatalf("the receiver got no span (requests to %v)", rc.paths)
			}
			if res["service.name"] != ServiceName || res["service.instance.id"] != "backend-1" || res["service.version"] != "v9" {
				t.Errorf("resource %v, want service.name kandev, instance backend-1, version v9", res)
			}
			if len(rc.paths) == 0 || rc.paths[0] != "/v1/traces" {
				t.Errorf("export paths %v, want /v1/traces", rc.paths)
			}
		})
	}
}

// TestShutdownBounded: a collector that never answers holds Shutdown
// for at most ShutdownWait (and a little).
func TestShutdownBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits ShutdownWait")
	}
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	tr, err := New(context.Background(), Config{Endpoint: srv.URL, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Provider.Tracer("t").Start(context.Background(), "stuck")
	span.End()
	start := time.Now()
	_ = tr.Shutdown(context.Background()) // an error is expected: the export timed out
	if d := time.Since(start); d > ShutdownWait+2*time.Second {
		t.Errorf("shutdown took %s, past its bound %s", d, ShutdownWait)
	}
}
