package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// validationSubject is one fixture ready to measure.
type validationSubject struct {
	fx      validationFixture
	schema  []byte          // the advertised input schema, as the wrapper compiles it
	raw     json.RawMessage // the arguments as sent
	args    map[string]any  // decoded like the wrapper does (json.Number)
	bare    *jsonschema.Schema
	call    json.RawMessage // tools/call for HandleMessage
	on, off *mcpserver.MCPServer
}

// MeasureValidation runs section 1: for each fixture and repetition, the
// wrapper's check, the bare cached Validate, a fresh compile per call and
// mcp-go's built-in validation (on minus off), back to back.
func MeasureValidation(ctx context.Context, c *toolserver.Compiled, reps int, logf func(string, ...any)) ([]ValidationCase, error) {
	out := make([]ValidationCase, 0, len(validationFixtures))
	for _, fx := range validationFixtures {
		vc := ValidationCase{Case: fx.Case, Tool: fx.Tool, Valid: fx.Valid}
		sub, err := newValidationSubject(ctx, c, fx)
		if errors.Is(err, errMissingTool) {
			vc.Missing, vc.Note = true, "not in the catalog when this run was made"
			out = append(out, vc)
			continue
		}
		if err != nil {
			return nil, err
		}
		vc.Note, vc.Problems = sub.sanity(c)
		vc.MCPGoRejected = sub.mcpgoRejects(ctx)
		// Paired variants run next to each other; odd repetitions run in
		// reverse order, so neither side of a pair always runs first. The
		// garbage-heavy fresh compile runs at either end.
		benches := []func(*testing.B){sub.benchWrapper(c), sub.benchBare, sub.benchWrapperJSON(c),
			sub.benchHandle(sub.on), sub.benchHandle(sub.off), sub.benchFresh}
		res := make([][]testing.BenchmarkResult, len(benches))
		for rep := range reps {
			logf("validation %s: repetition %d/%d", fx.Case, rep+1, reps)
			for k := range benches {
				if rep%2 == 1 {
					k = len(benches) - 1 - k
				}
				res[k] = append(res[k], testing.Benchmark(benches[k]))
			}
		}
		wr, br, wj, on, off, fr := res[0], res[1], res[2], res[3], res[4], res[5]
		vc.Wrapper, vc.WrapperJSON = medianMicro(wr), medianMicro(wj)
		vc.Bare, vc.Fresh = medianMicro(br), medianMicro(fr)
		vc.MCPGo = Micro{
			NsPerOp:     PairedDiffs(field(on, nsPerOp), field(off, nsPerOp)),
			AllocsPerOp: PairedDiffs(field(on, allocsPerOp), field(off, allocsPerOp)),
			BytesPerOp:  PairedDiffs(field(on, bytesPerOp), field(off, bytesPerOp)),
		}
		w := field(wr, nsPerOp)
		vc.WrapperOverBare = PairedRatios(w, field(br, nsPerOp))
		mcpDiff := make([]float64, len(on))
		for i := range on {
			mcpDiff[i] = nsPerOp(on[i]) - nsPerOp(off[i])
		}
		vc.MCPGoOverWrapper = PairedRatios(mcpDiff, w)
		vc.MCPGoOverWrapperJSON = PairedRatios(mcpDiff, field(wj, nsPerOp))
		vc.FreshOverWrapper = PairedRatios(field(fr, nsPerOp), w)
		out = append(out, vc)
	}
	return out, nil
}

var errMissingTool = errors.New("tool not in the catalog")

func newValidationSubject(ctx context.Context, c *toolserver.Compiled, fx validationFixture) (*validationSubject, error) {
	var tool *catalog.Tool
	for _, t := range c.Catalog().All() {
		if t.Name == fx.Tool {
			tool = t
		}
	}
	if tool == nil {
		return nil, errMissingTool
	}
	schema, err := json.Marshal(tool.InputSchema())
	if err != nil {
		return nil, fmt.Errorf("%s: input schema: %w", fx.Tool, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(fx.Args)); err != nil {
		return nil, fmt.Errorf("%s: fixture: %w", fx.Case, err)
	}
	dec := json.NewDecoder(bytes.NewReader(compact.Bytes()))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("%s: fixture: %w", fx.Case, err)
	}
	bare, err := compileBare(schema)
	if err != nil {
		return nil, fmt.Errorf("%s: bare compile: %w", fx.Tool, err)
	}
	call := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, fx.Tool, compact.Bytes())
	s := &validationSubject{fx: fx, schema: schema, raw: compact.Bytes(), args: args, bare: bare, call: call}
	s.on = peerServer(ctx, fx.Tool, schema, mcpserver.WithInputSchemaValidation())
	s.off = peerServer(ctx, fx.Tool, schema)
	return s, nil
}

// compileBare compiles schema the way argcheck does (draft 2020-12, no
// loader) but keeps only the jsonschema Schema: the floor.
func compileBare(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	const url = "mem:///bench/tool-input.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// peerServer is a plain mcp-go server with one no-op tool declaring the
// same name and input schema.
func peerServer(ctx context.Context, name string, schema []byte, opts ...mcpserver.ServerOption) *mcpserver.MCPServer {
	s := mcpserver.NewMCPServer("peer", "1", append([]mcpserver.ServerOption{mcpserver.WithToolCapabilities(false)}, opts...)...)
	s.AddTool(mcp.Tool{Name: name, RawInputSchema: schema}, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	s.HandleMessage(ctx, json.RawMessage(init))
	return s
}

// sanity checks that the fixture does what its case claims; a mismatch is
// reported next to the figures instead of failing the run.
func (s *validationSubject) sanity(c *toolserver.Compiled) (note string, problems int) {
	err := c.Check(s.fx.Tool, s.args)
	var p *argcheck.Problems
	if errors.As(err, &p) {
		problems = len(p.List)
	}
	switch {
	case s.fx.Valid && err != nil:
		return "fixture no longer valid: " + err.Error(), problems
	case !s.fx.Valid && err == nil:
		return "fixture unexpectedly valid", 0
	case !s.fx.Valid && problems != s.fx.Problems:
		return fmt.Sprintf("wrapper reported %d problems, fixture built for %d", problems, s.fx.Problems), problems
	}
	if s.bare.Validate(s.args) == nil != s.fx.Valid {
		return "bare Validate disagrees with the wrapper", problems
	}
	return "", problems
}

// mcpgoRejects reports whether mcp-go with validation on refused the call.
func (s *validationSubject) mcpgoRejects(ctx context.Context) bool {
	resp := s.on.HandleMessage(ctx, s.call)
	r, ok := resp.(mcp.JSONRPCResponse)
	if !ok {
		return true // a JSON-RPC error is a refusal too
	}
	res, ok := r.Result.(*mcp.CallToolResult)
	return ok && res.IsError
}

func (s *validationSubject) benchWrapper(c *toolserver.Compiled) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.Check(s.fx.Tool, s.args); err != nil {
				_ = err.Error() // the wrapper renders the message it returns
			}
		}
	}
}

func (s *validationSubject) benchWrapperJSON(c *toolserver.Compiled) func(b *testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.CheckJSON(s.fx.Tool, s.raw); err != nil {
				_ = err.Error()
			}
		}
	}
}

func (s *validationSubject) benchBare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = s.bare.Validate(s.args) // the floor does not render anything
	}
}

func (s *validationSubject) benchFresh(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		v, err := argcheck.Compile(s.fx.Tool, s.schema)
		if err != nil {
			b.Fatal(err)
		}
		if err := v.Validate(s.args); err != nil {
			_ = err.Error()
		}
	}
}

func (s *validationSubject) benchHandle(srv *mcpserver.MCPServer) func(b *testing.B) {
	return func(b *testing.B) {
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			_ = srv.HandleMessage(ctx, s.call)
		}
	}
}

func nsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

func allocsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.MemAllocs) / float64(r.N)
}

func bytesPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.MemBytes) / float64(r.N)
}

func field(rs []testing.BenchmarkResult, f func(testing.BenchmarkResult) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func medianMicro(rs []testing.BenchmarkResult) Micro {
	return Micro{
		NsPerOp:     Median(field(rs, nsPerOp)),
		AllocsPerOp: Median(field(rs, allocsPerOp)),
		BytesPerOp:  Median(field(rs, bytesPerOp)),
	}
}
