package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentOffers: an agent's offer is kept, replaced whole, read back
// only for the types asked, and clipped to the kanban bounds.
func TestAgentOffers(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		at := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
		if got, err := s.AgentOffers(ctx, []string{"mock-agent"}); err != nil || len(got) != 0 {
			t.Fatalf("before any offer: %v, %v", got, err)
		}
		first := kanban.AgentOffer{Agent: "mock-agent", Models: []kanban.AgentModel{{ID: "a", Name: "A"}}, Modes: []string{"code"}, OfferedAt: at}
		if err := s.SetAgentOffer(ctx, first); err != nil {
			t.Fatal(err)
		}
		many := make([]kanban.AgentModel, kanban.MaxAgentOffered+5)
		for i := range many {
			many[i] = kanban.AgentModel{ID: strings.Repeat("m", kanban.MaxAgentOfferedLen+10)}
		}
		second := kanban.AgentOffer{Agent: "mock-agent", Models: many, Modes: nil, OfferedAt: at.Add(time.Minute)}
		if err := s.SetAgentOffer(ctx, second); err != nil {
			t.Fatal(err)
		}
		if err := s.SetAgentOffer(ctx, kanban.AgentOffer{Agent: "other", Models: []kanban.AgentModel{{ID: "x"}}, OfferedAt: at}); err != nil {
			t.Fatal(err)
		}
		got, err := s.AgentOffers(ctx, []string{"mock-agent", "absent"})
		if err != nil || len(got) != 1 {
			t.Fatalf("offers: %v, %v", got, err)
		}
		o := got[0]
		if o.Agent != "mock-agent" || len(o.Models) != kanban.MaxAgentOffered || len(o.Models[0].ID) != kanban.MaxAgentOfferedLen ||
			len(o.Modes) != 0 || !o.OfferedAt.Equal(at.Add(time.Minute)) {
			t.Fatalf("replaced offer: agent %q, %d models (first %d bytes), modes %v, at %s", o.Agent, len(o.Models), len(o.Models[0].ID), o.Modes, o.OfferedAt)
		}
		if err := s.SetAgentOffer(ctx, first); err != nil {
			t.Fatal(err)
		}
		got, _ = s.AgentOffers(ctx, []string{"mock-agent"})
		if !slices.Equal(got[0].Models, first.Models) || !slices.Equal(got[0].Modes, first.Modes) {
			t.Fatalf("offer replaced back: %+v", got[0])
		}
		if _, err := s.AgentOffers(ctx, make([]string, kanban.MaxLimit+1)); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("too many names: %v", err)
		}
	})
}
