package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// keptSpans is the SDK's in-memory exporter, kept past the backend's
// shutdown (the exporter's own Shutdown forgets its spans).
type keptSpans struct{ *tracetest.InMemoryExporter }

func (keptSpans) Shutdown(context.Context) error { return nil }

// withSpans has a backend export its spans, through its real batching
// provider, to the returned exporter; they are all there once the
// backend stopped (its shutdown flushes).
func withSpans() (func(*Config), keptSpans) {
	exp := keptSpans{tracetest.NewInMemoryExporter()}
	return func(c *Config) { c.Traces.Exporter = exp }, exp
}

// spanSet indexes one exporter's spans.
type spanSet []tracetest.SpanStub

// named returns the spans called name.
func (s spanSet) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, sp := range s {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

// one returns the one span called name whose parent is parent (any parent
// when parent is invalid), failing the test unless there is exactly one.
func (s spanSet) one(t *testing.T, name string, parent trace.SpanContext) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, sp := range s.named(name) {
		if !parent.IsValid() || sp.Parent.SpanID() == parent.SpanID() {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		t.Fatalf("spans %q under %v: got %d, want 1 (all: %v)", name, parent.SpanID(), len(found), s.names())
	}
	return found[0]
}

// under returns the spans called name in the subtree of root.
func (s spanSet) under(root trace.SpanContext, name string) []tracetest.SpanStub {
	parent := map[trace.SpanID]trace.SpanID{}
	for _, sp := range s {
		parent[sp.SpanContext.SpanID()] = sp.Parent.SpanID()
	}
	var out []tracetest.SpanStub
	for _, sp := range s.named(name) {
		for id := sp.Parent.SpanID(); id.IsValid(); id = parent[id] {
			if id == root.SpanID() {
				out = append(out, sp)
				break
			}
		}
	}
	return out
}

func (s spanSet) names() []string {
	out := make([]string, 0, len(s))
	for _, sp := range s {
		out = append(out, sp.Name)
	}
	return out
}

func (s spanSet) attr(sp tracetest.SpanStub, key string) string {
	for _, a := range sp.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// TestTraceOfOneMCPCall: one create_task_kandev call over /mcp is one
// trace — the request through the gate, the tool call with its argument
// check, the registry's action, the store's transaction under it — and,
// with a second call the check refuses, the spans' names, attributes,
// events and resource hold none of the calls' argument values (canaries
// in the title, description and prompt) nor the operator token.
func TestTraceOfOneMCPCall(t *testing.T) {
	t.Parallel()
	opt, exp := withSpans()
	e := newEnvWith(t, opt)
	if !e.b.tracing.Enabled() {
		t.Fatal("tracing is off with an exporter configured")
	}
	ext := e.operatorMCP()
	canaries := []string{"canary-title-7d1f", "canary-description-91ab", "canary-prompt-5c2e"}
	args := fmt.Sprintf(`{"title":%q,"prompt":%q,"start_agent":false}`, canaries[0], canaries[2])
	if res := e.call(ext, "create_task_kandev", args); res.IsError {
		t.Fatalf("create_task_kandev: %s", text(res))
	}
	// Refused by the check (both a description and a prompt): its spans
	// hold no value either.
	refused := fmt.Sprintf(`{"title":%q,"description":%q,"prompt":%q}`, canaries[0], canaries[1], canaries[2])
	if res := e.call(ext, "create_task_kandev", refused); !res.IsError {
		t.Fatal("a description with a prompt was accepted")
	}
	e.close()
	spans := spanSet(exp.GetSpans())
	var tool tracetest.SpanStub
	for _, g := range spans.named("gate /mcp") {
		for _, sp := range spans.under(g.SpanContext, "tool create_task_kandev") {
			if spans.attr(sp, "kandev.outcome") == "ok" {
				tool = sp
			}
		}
	}
	if !tool.SpanContext.IsValid() {
		t.Fatalf("no gate /mcp span holds the tool call's span (spans: %v)", spans.names())
	}
	check := spans.one(t, "check", tool.SpanContext)
	act := spans.one(t, "action task.create", tool.SpanContext)
	txs := spans.under(act.SpanContext, "store.tx")
	if len(txs) == 0 {
		t.Fatalf("no store.tx span under the action (spans: %v)", spans.names())
	}
	for _, sp := range []tracetest.SpanStub{check, act, txs[0]} {
		if sp.SpanContext.TraceID() != tool.SpanContext.TraceID() {
			t.Errorf("%s: trace %v, want the call's %v", sp.Name, sp.SpanContext.TraceID(), tool.SpanContext.TraceID())
		}
	}
	if got := spans.attr(check, "kandev.check"); got != "ok" {
		t.Errorf("check: got %q, want ok", got)
	}
	results := map[string]int{}
	for _, c := range spans.named("check") {
		results[spans.attr(c, "kandev.check")]++
	}
	if results["ok"] != 1 || results["refused"] != 1 {
		t.Errorf("check results %v, want the refused create once", results)
	}
	if got := spans.attr(act, "kandev.action"); got != string(kanban.ActionTaskCreate) {
		t.Errorf("action span's action: got %q, want %q", got, kanban.ActionTaskCreate)
	}
	if got := spans.attr(txs[0], "db.system.name"); got != "sqlite" {
		t.Errorf("store.tx db.system.name: got %q, want sqlite", got)
	}
	if got := spans.attr(spans.named("gate /mcp")[0], "service.name"); got != "" {
		t.Errorf("service.name is an attribute of the span, want it in the resource only")
	}
	checkNoCanary(t, spans, append(canaries, e.token))
}

// checkNoCanary fails when any span's name, attribute, event, link or
// resource holds one of canaries.
func checkNoCanary(t *testing.T, spans spanSet, canaries []string) {
	t.Helper()
	if len(spans) == 0 {
		t.Fatal("no spans to check")
	}
	for _, sp := range spans {
		var texts []string
		texts = append(texts, sp.Name, sp.Status.Description)
		for _, a := range sp.Attributes {
			texts = append(texts, string(a.Key), a.Value.String())
		}
		for _, ev := range sp.Events {
			texts = append(texts, ev.Name)
			for _, a := range ev.Attributes {
				texts = append(texts, string(a.Key), a.Value.String())
			}
		}
		for _, l := range sp.Links {
			for _, a := range l.Attributes {
				texts = append(texts, a.Value.String())
			}
		}
		if sp.Resource != nil {
			for _, a := range sp.Resource.Attributes() {
				texts = append(texts, a.Value.String())
			}
		}
		for _, s := range texts {
			for _, c := range canaries {
				if strings.Contains(s, c) {
					t.Errorf("span %q carries a caller's value", sp.Name)
				}
			}
		}
	}
}

// TestTracingOffByDefault: a backend configured with no endpoint (and no
// OTEL_* variable) traces nothing: the no-op provider, no store or bus
// tracer, and the call path runs as before.
func TestTracingOffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Traces.Getenv = func(string) string { return "" } })
	if e.b.tracing.Enabled() {
		t.Fatal("tracing is on without an endpoint")
	}
	if e.b.store.Traced() {
		t.Error("the store traces with tracing off")
	}
	ext := e.operatorMCP()
	if res := e.call(ext, "list_tasks_kandev", `{"limit":5}`); res.IsError {
		t.Fatalf("list_tasks_kandev: %s", text(res))
	}
	ctx, span := e.b.tracing.Provider.Tracer("test").Start(context.Background(), "x")
	defer span.End()
	if trace.SpanContextFromContext(ctx).IsValid() || span.IsRecording() {
		t.Error("the off provider made a real span")
	}
}

// TestTraceCrossesBackends: on two backends sharing a PostgreSQL
// database, a task created over /mcp on A is relayed to B's subscribers,
// and B's delivery span continues A's trace: a child of A's bus.publish
// span, itself under A's action span.
func TestTraceCrossesBackends(t *testing.T) {
	t.Parallel()
	optA, expA := withSpans()
	optB, expB := withSpans()
	a, b := twoTracedBackends(t, optA, optB)
	heard := b.subscribe(action.WorkspaceTopic(a.workspaceID()))
	ext := a.operatorMCP()
	canary := "canary-cross-backend-4e0b"
	var out action.TaskCreateOut
	a.decode(a.call(ext, "create_task_kandev", fmt.Sprintf(`{"title":%q,"start_agent":false}`, canary)), &out)
	waitFor(t, func() bool { return heard.ids(kanban.EventTaskCreated.Name())[out.Task.ID] > 0 })
	a.close()
	b.close()
	onA, onB := spanSet(expA.GetSpans()), spanSet(expB.GetSpans())
	act := onA.one(t, "action task.create", trace.SpanContext{})
	var pub tracetest.SpanStub
	for _, p := range onA.under(act.SpanContext, "bus.publish") {
		if onA.attr(p, "kandev.event") == kanban.EventTaskCreated.Name() {
			pub = p
		}
	}
	if !pub.SpanContext.IsValid() {
		t.Fatalf("no bus.publish of task.created under A's action (A: %v)", onA.names())
	}
	if len(onA.under(act.SpanContext, "store.tx")) == 0 {
		t.Errorf("no store.tx under A's action (A: %v)", onA.names())
	}
	var deliver []tracetest.SpanStub
	for _, d := range onB.named("bus.deliver") {
		if d.Parent.SpanID() == pub.SpanContext.SpanID() {
			deliver = append(deliver, d)
		}
	}
	if len(deliver) != 1 {
		t.Fatalf("B's bus.deliver spans under A's publish: got %d, want 1 (B: %v)", len(deliver), onB.names())
	}
	d := deliver[0]
	if d.SpanContext.TraceID() != act.SpanContext.TraceID() || !d.Parent.IsRemote() {
		t.Errorf("B's delivery: trace %v (remote parent %v), want A's %v", d.SpanContext.TraceID(), d.Parent.IsRemote(), act.SpanContext.TraceID())
	}
	if got, want := onB.attr(d, "kandev.origin"), a.b.shared.id; got != want {
		t.Errorf("delivery origin: got %q, want A's id %q", got, want)
	}
	if got, want := d.Resource.Attributes(), b.b.shared.id; !hasAttr(got, "service.instance.id", want) {
		t.Errorf("B's resource %v, want service.instance.id %s", got, want)
	}
	checkNoCanary(t, append(onA, onB...), []string{canary, a.token})
}

// twoTracedBackends is twoBackends (without agents), each exporting its
// spans through its own option.
func twoTracedBackends(t *testing.T, optA, optB func(*Config)) (*env, *env) {
	t.Helper()
	u := pgtest.Database(t)
	shared := func(c *Config) { c.Database, c.LeaseBeat, c.LeaseTTL = u, testBeat, testTTL }
	return newEnvWith(t, shared, optA), newEnvWith(t, shared, optB)
}

func hasAttr(kvs []attribute.KeyValue, key, want string) bool {
	for _, kv := range kvs {
		if string(kv.Key) == key && kv.Value.String() == want {
			return true
		}
	}
	return false
}

var _ sdktrace.SpanExporter = keptSpans{}
