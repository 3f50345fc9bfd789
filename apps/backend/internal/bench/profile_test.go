package bench

import (
	"testing"

	"github.com/google/pprof/profile"
)

// TestCategorize groups synthetic samples: each counts once, in the first
// group whose code is on its stack, and an Encode counts as mcp-go's only
// when mcp-go's server called it.
func TestCategorize(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location { // leaf first
		var out []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{Name: n}
			}
			out = append(out, &profile.Location{Line: []profile.Line{{Function: fn[n]}}})
		}
		return out
	}
	const (
		handle = "github.com/mark3labs/mcp-go/server.(*StreamableHTTPServer).handlePost"
		wrap   = "github.com/kandev/kandev/apps/backend/internal/mcp/toolserver.New.wrap.func7"
		encode = "encoding/json.(*Encoder).Encode"
	)
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples"}, {Type: "cpu", Unit: "nanoseconds"}}}
	add := func(ns int64, stack ...string) {
		p.Sample = append(p.Sample, &profile.Sample{Value: []int64{1, ns}, Location: loc(stack...)})
	}
	add(4000, "modernc.org/sqlite/lib._sqlite3VdbeExec", "github.com/kandev/kandev/apps/backend/internal/store.(*Store).ListTasks", wrap, handle)
	add(3000, "encoding/json.appendCompact", encode, handle)                                                                                    // mcp-go writes the response
	add(2000, "encoding/json.appendCompact", encode, "github.com/kandev/kandev/apps/backend/internal/mcp/toolserver.marshalArgs", wrap, handle) // ours
	add(1000, "runtime.gcDrain", "runtime.gcBgMarkWorker")
	cpu, shares, err := categorize(p, 10)
	if err != nil {
		t.Fatal(err)
	}
	if cpu != 1 { // 10 µs of samples over 10 calls
		t.Errorf("got %v µs per call, want 1", cpu)
	}
	want := map[string]float64{
		"SQLite (modernc.org/sqlite, database/sql)": 0.4,
		"mcp-go encoding the result":                0.3,
		"Kandev: auth, gate, preflight, wrapper":    0.2,
		"Go runtime (GC, scheduler)":                0.1,
	}
	total := 0.0
	for _, s := range shares {
		total += s.Share
		if s.Share != want[s.Name] {
			t.Errorf("%s: got share %v, want %v", s.Name, s.Share, want[s.Name])
		}
	}
	if total < 0.999999 || total > 1.000001 {
		t.Errorf("shares add up to %v, want 1", total)
	}
}
