package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// switchesPerRep is how many timed switches into each mode one repetition makes.
const switchesPerRep = 200

// MeasureModeSwitch runs section 4: Server.SetProfile into each mode's
// default profile from another mode (a no-op switch is free by design, so
// each timed switch follows an untimed one away), and a full Compile() of
// the catalog for comparison.
func MeasureModeSwitch(c *toolserver.Compiled, reps int, logf func(string, ...any)) ([]ModeSwitch, LatencyStat, error) {
	srv, err := toolserver.New(toolserver.Config{Compiled: c, Profile: catalog.DefaultProfile(kanban.ModeTask)})
	if err != nil {
		return nil, LatencyStat{}, err
	}
	modes := kanban.AllModes
	var out []ModeSwitch
	for i, m := range modes {
		from := modes[(i+1)%len(modes)]
		to, away := catalog.DefaultProfile(m), catalog.DefaultProfile(from)
		tools, err := c.Tools(to)
		if err != nil {
			return nil, LatencyStat{}, err
		}
		var p50s, p99s []float64
		samples := 0
		for rep := range reps {
			logf("mode switch %s: repetition %d/%d", m, rep+1, reps)
			lat := make([]time.Duration, 0, switchesPerRep)
			for range switchesPerRep {
				if err := srv.SetProfile(away); err != nil {
					return nil, LatencyStat{}, err
				}
				t0 := time.Now()
				if err := srv.SetProfile(to); err != nil {
					return nil, LatencyStat{}, err
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			p50s, p99s = append(p50s, ms(Percentile(lat, 50))), append(p99s, ms(Percentile(lat, 99)))
			samples += len(lat)
		}
		out = append(out, ModeSwitch{Mode: string(m), From: string(from), Tools: len(tools),
			Time: LatencyStat{P50Ms: Median(p50s), P99Ms: Median(p99s), Samples: samples}})
	}
	var lat []time.Duration
	for rep := range reps {
		logf("full compile: repetition %d/%d", rep+1, reps)
		t0 := time.Now()
		if _, err := toolserver.Compile(); err != nil {
			return nil, LatencyStat{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	return out, Latency(lat), nil
}

// MeasureCatalog runs section 6: the tools/list tools array each mode's
// default profile is served (compact JSON bytes, exactly as mcp-go
// renders it), with an audit of the input schemas: objects that are
// neither closed nor explicit records, and properties without description.
func MeasureCatalog(ctx context.Context, c *toolserver.Compiled) ([]CatalogMode, error) {
	var out []CatalogMode
	for _, m := range kanban.AllModes {
		tools, err := toolserver.ListTools(ctx, c, catalog.DefaultProfile(m))
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(tools)
		if err != nil {
			return nil, fmt.Errorf("tools/list %s: %w", m, err)
		}
		cm := CatalogMode{Mode: string(m), Tools: len(tools), Bytes: len(b)}
		for _, raw := range tools {
			var t struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			}
			var in map[string]any
			if err := json.Unmarshal(raw, &t); err != nil {
				return nil, fmt.Errorf("tools/list %s: %w", m, err)
			}
			if err := json.Unmarshal(t.InputSchema, &in); err != nil {
				return nil, fmt.Errorf("tools/list %s: %w", m, err)
			}
			cm.InputBytes += len(t.InputSchema)
			cm.OutputBytes += len(t.OutputSchema)
			cm.Largest = append(cm.Largest, ToolSize{Name: t.Name, Bytes: len(raw)})
			open, undescribed := auditSchema(in)
			cm.Open += open
			cm.Undescribed += undescribed
		}
		slices.SortStableFunc(cm.Largest, func(a, b ToolSize) int { return cmp.Compare(b.Bytes, a.Bytes) })
		cm.Largest = cm.Largest[:min(3, len(cm.Largest))]
		out = append(out, cm)
	}
	return out, nil
}

// auditSchema counts, in a schema and everything under it, object schemas
// with properties that neither close them (additionalProperties or
// unevaluatedProperties false) nor make them explicit records (a typed
// additionalProperties with propertyNames), and declared properties with
// no description.
func auditSchema(s map[string]any) (open, undescribed int) {
	if s == nil {
		return 0, 0
	}
	if _, ok := s["properties"]; ok || s["type"] == "object" {
		ap, hasAP := s["additionalProperties"]
		up, hasUP := s["unevaluatedProperties"]
		_, hasPN := s["propertyNames"]
		closed := (hasAP && ap == false) || (hasUP && up == false)
		record := hasAP && hasPN && ap != true
		if !closed && !record {
			open++
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			ps, _ := p.(map[string]any)
			if d, _ := ps["description"].(string); d == "" {
				undescribed++
			}
			o, u := auditSchema(ps)
			open, undescribed = open+o, undescribed+u
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else"} {
		if sub, ok := s[k].(map[string]any); ok {
			o, u := auditSchema(sub)
			open, undescribed = open+o, undescribed+u
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "prefixItems"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				sub, _ := e.(map[string]any)
				o, u := auditSchema(sub)
				open, undescribed = open+o, undescribed+u
			}
		}
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for _, d := range defs {
			sub, _ := d.(map[string]any)
			o, u := auditSchema(sub)
			open, undescribed = open+o, undescribed+u
		}
	}
	return open, undescribed
}
