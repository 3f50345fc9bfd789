package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// ReportCallsIn is the payload of session.report_calls: the tool calls
// the session's MCP bridge answered since its previous report.
type ReportCallsIn struct {
	Calls []ReportedCall `json:"calls"`
}

// ReportedCall is one entry of a report: how many calls of tool (a
// catalog tool's name, or "upstream" for every proxied tool) the bridge's
// wrapper answered with outcome (as it logs them: "ok", an error code,
// invalid_arguments, an upstream outcome).
type ReportedCall struct {
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
}

// ReportCallsOut is the answer of session.report_calls: how many calls
// the report counted.
type ReportCallsOut struct {
	Counted int `json:"counted"`
}

var _ = declare(Def[ReportCallsIn, *ReportCallsOut]{
	Name: kanban.ActionSessionReportCalls,
	// It feeds this backend's metrics only: no state changes, nothing
	// to audit, no write to count against the session.
	Effect: Reads,
	Allow:  AllowSession,
	Schema: schema.Obj("", schema.P{
		"calls": schema.Arr("Tool calls by tool and outcome since the previous report.", schema.Obj("One tool and outcome.", schema.P{
			"tool":    schema.Str("A catalog tool's name, or upstream for every proxied tool.").Len(1, kanban.MaxReportedToolLen),
			"outcome": schema.Str("The wrapper's outcome.").Len(1, kanban.MaxReportedOutcome),
			"count":   schema.Int("Calls counted.").Range(1, kanban.MaxReportedCallCount),
		}, "tool", "outcome", "count")).Items(1, kanban.MaxReportedCalls),
	}, "calls"),
	Run: func(s *Service, _ context.Context, _ Principal, in ReportCallsIn) (*ReportCallsOut, error) {
		if s.reportCalls == nil {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "this backend does not count bridges' calls")
		}
		if err := s.reportCalls(in.Calls); err != nil {
			return nil, err
		}
		n := 0
		for _, c := range in.Calls {
			n += c.Count
		}
		return &ReportCallsOut{Counted: n}, nil
	},
})
