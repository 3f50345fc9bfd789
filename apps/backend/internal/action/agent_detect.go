package action

import (
	"context"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// AgentDetectIn is the payload of agent.detect.
type AgentDetectIn struct {
	Refresh bool   `json:"refresh,omitzero"`
	Limit   int    `json:"limit,omitzero"`
	Cursor  string `json:"cursor,omitzero"`
}

// Detection runs programs on the backend's machine (each agent type's
// launch, asked ACP initialize): the operator's alone.
var _ = declare(Def[AgentDetectIn, *kanban.List[kanban.AgentDetection]]{
	Name:   kanban.ActionAgentDetect,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"refresh": schema.Bool("Probe every agent type again first (each probe bounded to 45 s, four at a time).").Default(false),
	})),
	Run: func(s *Service, ctx context.Context, _ Principal, in AgentDetectIn) (*kanban.List[kanban.AgentDetection], error) {
		pg, err := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}.Normalize()
		if err != nil {
			return nil, err
		}
		if !s.managed {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "this backend launches no agents (kandev serve --agents): it detects none")
		}
		all := s.agents.Detect(ctx, in.Refresh)
		from := 0
		if pg.Cursor != "" {
			i := slices.IndexFunc(all, func(d kanban.AgentDetection) bool { return d.Name == pg.Cursor })
			if i < 0 {
				return nil, kanban.FieldError("cursor", "is not a valid cursor")
			}
			from = i + 1
		}
		out := &kanban.List[kanban.AgentDetection]{Items: all[from:min(from+pg.Limit, len(all))]}
		if from+pg.Limit < len(all) {
			out.NextCursor = out.Items[len(out.Items)-1].Name
		}
		return out, nil
	},
})
