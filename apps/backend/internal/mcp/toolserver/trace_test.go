package toolserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// TestGateSpans: a POST the gate refuses is one "gate /mcp" span with its
// status (400) and an error status, and no tool span; a caller's W3C
// traceparent is continued; a GET (a notification stream) makes none.
func TestGateSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	s, err := New(Config{Compiled: mustCompile(t), Profile: catalog.DefaultProfile(kanban.ModeExternal), Backend: &recorder{}, Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	h := s.HTTP(t.Context(), "/mcp", "", "")
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", parent)
	rec := httptest.NewRecorder()
	h.Streamable.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400 from the gate", rec.Code)
	}
	// A stream whose client is already gone: the handler returns at once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	get := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
	h.Streamable.ServeHTTP(httptest.NewRecorder(), get)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "gate /mcp" {
		names := []string{}
		for _, sp := range spans {
			names = append(names, sp.Name)
		}
		t.Fatalf("spans %v, want one gate /mcp", names)
	}
	sp := spans[0]
	if sp.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sp.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("trace %v parent %v, want the caller's", sp.SpanContext.TraceID(), sp.Parent.SpanID())
	}
	got := map[string]string{}
	for _, a := range sp.Attributes {
		got[string(a.Key)] = a.Value.String()
	}
	want := map[string]string{"http.request.method": "POST", "http.route": "/mcp", "http.response.status_code": "400"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s: got %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want only %v", got, want)
	}
	if sp.Status.Code.String() != "Error" {
		t.Errorf("status %v, want Error", sp.Status.Code)
	}
}
