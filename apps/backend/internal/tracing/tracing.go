// Package tracing owns the backend's OpenTelemetry tracer provider: an
// OTLP/HTTP exporter behind a batch span processor when an endpoint is
// configured (--otlp-endpoint or the standard OTEL_EXPORTER_OTLP_*
// variables), the no-op provider otherwise. (The W3C trace context
// between backends travels in the cluster package's event log.)
//
// The parts that make spans (toolserver, action, store, cluster, agent)
// are handed a trace.TracerProvider; none imports this package.
// It imports the OpenTelemetry SDK and the standard library only, and
// sets no global of the otel package.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of every span.
const ServiceName = "kandev"

// ShutdownWait bounds how long Shutdown flushes the spans still batched.
const ShutdownWait = 5 * time.Second

// Config is what a backend's tracing is built from.
type Config struct {
	// Endpoint is the OTLP/HTTP collector URL (--otlp-endpoint), e.g.
	// http://127.0.0.1:4318 (spans go to its /v1/traces, unless the URL
	// has a path of its own); empty falls back to OTEL_EXPORTER_OTLP_*.
	Endpoint string
	// BackendID is the service.instance.id of the spans.
	BackendID string
	// Version is the service.version.
	Version string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

// Tracing is a backend's tracer provider and how to stop it.
type Tracing struct {
	Provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // nil when off
}

// Off is tracing that makes no spans and starts nothing.
func Off() *Tracing { return &Tracing{Provider: noop.NewTracerProvider()} }

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t.sdk != nil }

// New is the tracing cfg configures: off (no exporter, no goroutine)
// unless an endpoint is set by cfg.Endpoint, OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, and off whenever
// OTEL_SDK_DISABLED is true. The exporter reads the other standard
// variables itself (headers, timeout, compression, TLS).
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return Off(), nil
	}
	if cfg.Endpoint == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return Off(), nil
	}
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		u, err := tracesURL(cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	return WithExporter(ctx, exp, cfg)
}

// tracesURL is the export URL of an --otlp-endpoint: an http or https URL
// with a host; without a path, the collector's OTLP/HTTP traces path
// /v1/traces is added (as for OTEL_EXPORTER_OTLP_ENDPOINT). The error
// never repeats the value (it may carry credentials).
func tracesURL(endpoint string) (string, error) {
	bad := errors.New("the OTLP endpoint must be an http:// or https:// URL with a host")
	if len(endpoint) > 2048 {
		return "", bad
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", bad
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// WithExporter is tracing through exp, batched, with the backend's
// resource: what New builds once it has an exporter, and what tests use
// with an in-memory one.
func WithExporter(ctx context.Context, exp sdktrace.SpanExporter, cfg Config) (*Tracing, error) {
	res, err := Resource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, sdk: tp}, nil
}

// Resource is the spans' resource: service.name kandev, the backend's id
// and version, and OTEL_RESOURCE_ATTRIBUTES.
func Resource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if cfg.BackendID != "" {
		attrs = append(attrs, attribute.String("service.instance.id", cfg.BackendID))
	}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	// Ours last: service.name stays kandev whatever the environment says.
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(attrs...))
	if err != nil && res == nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return res, nil
}

// Shutdown flushes the batched spans and stops the exporter, within
// ShutdownWait of its own (ctx's values only: it runs as the backend
// stops, after its base context ended).
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownWait)
	defer cancel()
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut down tracing: %w", err)
	}
	return nil
}
