package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// A profile's samples are grouped by the first category (in this order)
// that claims their stack, so each sample counts once: the database first,
// then validation, logging, mcp-go encoding the result, the network, our
// action layer and store, our HTTP path, the rest of mcp-go and, last, the
// Go runtime on its own (GC workers, the scheduler).
type profileCategory struct {
	name  string
	claim func(stack []string) bool // leaf first
}

var profileCategories = []profileCategory{
	{"SQLite (modernc.org/sqlite, database/sql)", anyFrame(prefix("modernc.org/", "database/sql."))},
	{"argument validation (argcheck, jsonschema)", anyFrame(contains("/internal/argcheck.", "santhosh-tekuri/jsonschema"))},
	{"logging (log/slog)", anyFrame(prefix("log/slog."))},
	{"mcp-go encoding the result", mcpgoEncoding},
	{"HTTP and network I/O (net/http, syscalls)", anyFrame(prefix("net/http.(*conn).readRequest", "net/http.(*response).",
		"net/http.(*chunkWriter).", "net/http.(*connReader).", "bufio.", "internal/poll.", "net.(*conn).", "syscall."))},
	{"Kandev: actions, store, result encoding", anyFrame(contains("/internal/action.", "/internal/store.", "/internal/kanban."))},
	{"Kandev: auth, gate, preflight, wrapper", anyFrame(contains("/internal/mcp/gate.", "/internal/mcp/toolserver.", "/internal/app."))},
	{"mcp-go handling the request", anyFrame(prefix("github.com/mark3labs/mcp-go/"))},
	{"Go runtime (GC, scheduler)", func([]string) bool { return true }},
}

func prefix(ps ...string) func(string) bool {
	return func(f string) bool {
		return slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(f, p) })
	}
}

func contains(subs ...string) func(string) bool {
	return func(f string) bool {
		return slices.ContainsFunc(subs, func(s string) bool { return strings.Contains(f, s) })
	}
}

func anyFrame(match func(string) bool) func([]string) bool {
	return func(stack []string) bool { return slices.ContainsFunc(stack, match) }
}

// mcpgoEncoding claims mcp-go's CallToolResult.MarshalJSON and the JSON
// encoder mcp-go writes each response with (an Encode called by mcp-go's
// server, not by our wrapper).
func mcpgoEncoding(stack []string) bool {
	for i, f := range stack {
		if f == "github.com/mark3labs/mcp-go/mcp.CallToolResult.MarshalJSON" {
			return true
		}
		if f == "encoding/json.(*Encoder).Encode" && i+1 < len(stack) && strings.HasPrefix(stack[i+1], "github.com/mark3labs/mcp-go/server.") {
			return true
		}
	}
	return false
}

// fetchProfile takes a CPU profile of d from the pprof endpoint at base
// (http://ADDR/debug/pprof/).
func fetchProfile(ctx context.Context, base string, d time.Duration) (*profile.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	url := fmt.Sprintf("%sprofile?seconds=%d", base, int(d.Round(time.Second)/time.Second))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("profile: HTTP %d", resp.StatusCode)
	}
	return profile.Parse(resp.Body)
}

// categorize splits a CPU profile's time by profileCategories, per call.
func categorize(p *profile.Profile, calls int) (cpuUs float64, shares []CPUShare, err error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 || calls == 0 {
		return 0, nil, fmt.Errorf("profile has no cpu samples or no calls were made")
	}
	ns := make([]int64, len(profileCategories))
	var total int64
	for _, s := range p.Sample {
		stack := sampleStack(s)
		for i, c := range profileCategories {
			if c.claim(stack) {
				ns[i] += s.Value[idx]
				break
			}
		}
		total += s.Value[idx]
	}
	if total == 0 {
		return 0, nil, fmt.Errorf("profile has no cpu samples")
	}
	for i, c := range profileCategories {
		shares = append(shares, CPUShare{Name: c.name, Share: float64(ns[i]) / float64(total), CPUUs: float64(ns[i]) / 1e3 / float64(calls)})
	}
	return float64(total) / 1e3 / float64(calls), shares, nil
}

// sampleStack lists a sample's function names, leaf first (inlined
// functions before the function they were inlined into).
func sampleStack(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil {
				out = append(out, l.Function.Name)
			}
		}
	}
	return out
}

// profileLoad profiles the server at pprofBase while n clients call c on
// e for d, and returns the profile grouped per call.
func profileLoad(ctx context.Context, pprofBase string, e *endpoint, key string, c call, n int, d time.Duration) (ServerProfile, error) {
	sp := ServerProfile{Target: key, Clients: n, Seconds: d.Seconds()}
	type fetched struct {
		p   *profile.Profile
		err error
	}
	ch := make(chan fetched, 1)
	go func() {
		p, err := fetchProfile(ctx, pprofBase, d)
		ch <- fetched{p, err}
	}()
	r, err := runLoad(ctx, e, c, n, d)
	f := <-ch
	if err != nil {
		return sp, err
	}
	if f.err != nil {
		return sp, f.err
	}
	sp.Calls, sp.Errors = r.calls, r.errors
	sp.CPUUs, sp.Shares, err = categorize(f.p, r.calls)
	return sp, err
}
