package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// SetAgentOffer replaces the agent type's offer (clipped to the kanban
// bounds).
func (s *Store) SetAgentOffer(ctx context.Context, o kanban.AgentOffer) error {
	o = kanban.ClipOffer(o)
	models, err := json.Marshal(o.Models)
	if err != nil {
		return fmt.Errorf("set agent offer: %w", err)
	}
	modes, err := json.Marshal(o.Modes)
	if err != nil {
		return fmt.Errorf("set agent offer: %w", err)
	}
	return s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO agent_offers (agent, models, modes, offered_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (agent) DO UPDATE SET models = excluded.models, modes = excluded.modes, offered_at = excluded.offered_at`,
			o.Agent, string(models), string(modes), fmtTime(o.OfferedAt))
		if err != nil {
			return fmt.Errorf("set agent offer: %w", err)
		}
		return nil
	})
}

// AgentOffers returns the offers of the agent types named (at most
// kanban.MaxLimit), in no particular order.
func (s *Store) AgentOffers(ctx context.Context, agents []string) ([]kanban.AgentOffer, error) {
	if len(agents) == 0 {
		return nil, nil
	}
	if len(agents) > kanban.MaxLimit {
		return nil, kanban.Errorf(kanban.CodeValidation, "at most %d agent types at once", kanban.MaxLimit)
	}
	args := make([]any, len(agents))
	for i, a := range agents {
		args[i] = a
	}
	q := `SELECT agent, models, modes, offered_at FROM agent_offers WHERE agent IN (?` + strings.Repeat(", ?", len(agents)-1) + `)`
	rows, err := s.stmts.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("agent offers: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []kanban.AgentOffer
	for rows.Next() {
		var o kanban.AgentOffer
		var models, modes, at string
		if err := rows.Scan(&o.Agent, &models, &modes, &at); err != nil {
			return nil, fmt.Errorf("agent offers: %w", err)
		}
		if err := json.Unmarshal([]byte(models), &o.Models); err != nil {
			return nil, fmt.Errorf("agent offer models: %w", err)
		}
		if err := json.Unmarshal([]byte(modes), &o.Modes); err != nil {
			return nil, fmt.Errorf("agent offer modes: %w", err)
		}
		o.OfferedAt = parseTime(at)
		out = append(out, o) // clipped when written
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("agent offers: %w", err)
	}
	return out, nil
}
