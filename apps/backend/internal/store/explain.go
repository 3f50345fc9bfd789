package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ExplainTaskListing runs the query of one page of task summaries (the
// rows of task.list and list_tasks) for f and p under the engine's
// planner report — EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL, EXPLAIN
// QUERY PLAN on SQLite — and returns the plan's lines. The bench prints
// it at scale; TestListingPlans checks that no plan walks the board.
func (s *Store) ExplainTaskListing(ctx context.Context, f kanban.TaskFilter, p kanban.Page) ([]string, error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	where, args := taskFilterWhere(f)
	query, args, err := inOrder(f, summariesByPosition, summariesByCreation).query(p, where, args...)
	if err != nil {
		return nil, err
	}
	return s.explain(ctx, query, args...)
}

// explain returns the planner's report of query with args, one line per
// plan node.
func (s *Store) explain(ctx context.Context, query string, args ...any) ([]string, error) {
	prefix, col := "EXPLAIN QUERY PLAN ", 3
	if s.eng == Postgres {
		prefix, col = "EXPLAIN (ANALYZE, BUFFERS) ", 0
		query = rebind(query)
	}
	rows, err := s.db.QueryContext(ctx, prefix+query, args...)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		out = append(out, strings.TrimRight(fmt.Sprint(vals[min(col, len(vals)-1)]), " "))
	}
	return out, rows.Err()
}
