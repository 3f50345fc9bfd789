package upstream_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestHostileFixture puts the hostile fixture behind the gateway over stdio
// and over HTTP: every case is served or refused as the fixture declares,
// the refusals are reported with their limit, escaped and bounded, the
// ordinary tools still work, and the process (and the child) stay alive.
func TestHostileFixture(t *testing.T) {
	t.Parallel()
	eachTransport(t, true, func(t *testing.T, cfg kanban.MCPServerConfig, events func() []fixture.Event) {
		g := newGW(t, cfg, events)
		tools := g.tools()
		rep := g.report()
		if rep.State != kanban.UpstreamReady {
			t.Fatalf("state %s (%s), want ready", rep.State, rep.Detail)
		}
		refused := map[string]kanban.RefusedTool{}
		for _, r := range rep.Refused {
			refused[r.Tool] = r
			if escape.Needed(r.Tool) || escape.Needed(r.Reason) || len(r.Tool) > kanban.MaxUpstreamToolText || len(r.Reason) > kanban.MaxUpstreamReason {
				t.Errorf("refusal %q / %q is not escaped and bounded", r.Tool, r.Reason)
			}
		}
		if err := kanban.ValidateUpstreams([]kanban.UpstreamServer{rep}); err != nil {
			t.Errorf("the report would be refused by the backend: %v", err)
		}
		for _, c := range fixture.Hostile() {
			_, served := tools["fx__"+c.Name]
			r, isRefused := refused[escape.Excerpt(c.Name, 120)]
			want := c.Gateway()
			switch {
			case want == "" && !served:
				t.Errorf("%s: not served (refused: %+v), want served", c.Name, r)
			case want != "" && served:
				t.Errorf("%s: served, want refused by %s", c.Name, want)
			case want != "" && (!isRefused || r.Limit != want):
				t.Errorf("%s: got refusal %+v, want limit %s", escape.Excerpt(c.Name, 40), r, want)
			}
		}
		if got, isErr := g.call(context.Background(), "fx__echo", `{"text":"hi","times":2}`); isErr || got != "hihi" {
			t.Fatalf("echo after the hostile list: got %q (error %v)", got, isErr)
		}
		if n := fixture.Calls(g.events(), "echo"); n != 1 {
			t.Fatalf("fixture counted %d echo calls, want 1", n)
		}
		waitFor(t, "the report to reach the backend side", func() bool {
			p := g.reports.Load()
			return p != nil && len(*p) == 1 && (*p)[0].State == kanban.UpstreamReady && (*p)[0].ToolsRefused == rep.ToolsRefused
		})
	})
}

// TestHostileNamesInErrors calls the tool whose property name is 100 KB
// with control characters, served under the highest byte budgets: the
// error is at most 1 KiB and escaped.
func TestHostileNamesInErrors(t *testing.T) {
	t.Parallel()
	cfg, events := httpServer(t, true)
	cfg.MaxToolBytes, cfg.MaxServerBytes = kanban.MaxUpstreamToolBytes, kanban.MaxUpstreamServerBytes
	g := newGW(t, cfg, events)
	key, _ := json.Marshal(fixture.LongName)
	got, isErr := g.call(context.Background(), "fx__long_property_name", `{`+string(key)+`:9}`)
	if !isErr || len(got) > 1024 || escape.Needed(got) || !strings.Contains(got, `\x1b[31m`) || !strings.HasPrefix(got, "invalid arguments for fx__long_property_name: /") {
		t.Fatalf("got %q (%d bytes), want an escaped message of at most 1 KiB", escape.Excerpt(got, 200), len(got))
	}
	got, _ = g.call(context.Background(), "fx__long_property_name", `{"other":1}`)
	if len(got) > 1024 || escape.Needed(got) {
		t.Fatalf("unknown-field message %q (%d bytes) not bounded and escaped", escape.Excerpt(got, 200), len(got))
	}
	if n := fixture.Calls(g.events(), ""); n != 0 {
		t.Fatalf("fixture counted %d calls, want 0", n)
	}
}
