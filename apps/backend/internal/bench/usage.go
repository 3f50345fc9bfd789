package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// UsageRun is section 15: what recording one turn's usage costs (the
// runtime's store.RecordUsage at the end of every turn: the session's
// totals, a turn row and the trim to kanban.MaxUsageTurnRows, in one
// write transaction), in process on the real SQLite store. Baseline,
// paired in the same run: appending one conversation message, the
// smallest write every turn already makes, so Ratio is the usage
// record's cost in units of a message.
type UsageRun struct {
	RecordNs   float64 `json:"record_ns_per_turn"`
	BaselineNs float64 `json:"message_ns"`
	Ratio      float64 `json:"record_over_message"`
	AllocsPer  float64 `json:"record_allocs_per_turn"`
}

// MeasureUsage runs section 15.
func MeasureUsage(ctx context.Context, cfg Config) (*UsageRun, error) {
	dir, err := mkdir(cfg, "usage")
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	sess, err := usageSession(ctx, st)
	if err != nil {
		return nil, err
	}
	cost := 0.0
	record := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cost += 0.001 // the agent's cumulative cost grows every turn
			if _, err := st.RecordUsage(ctx, kanban.UsageReport{SessionID: sess.ID, AgentSessionID: "acp-bench",
				Tokens: kanban.Tokens{Input: 1200, Output: 300, CachedRead: 800}, Cost: &kanban.Cost{Amount: cost, Currency: "USD"},
				ContextUsed: 2300, ContextSize: 200000}); err != nil {
				b.Fatal(err)
			}
		}
	}
	message := func(b *testing.B) {
		for b.Loop() {
			if _, err := st.AppendMessage(ctx, kanban.Message{SessionID: sess.ID, Author: "agent", Type: "message",
				Content: "The turn's answer."}); err != nil {
				b.Fatal(err)
			}
		}
	}
	var rr, mr []testing.BenchmarkResult
	for rep := range cfg.MicroReps {
		cfg.Logf("usage: repetition %d/%d", rep+1, cfg.MicroReps)
		if rep%2 == 0 {
			rr, mr = append(rr, testing.Benchmark(record)), append(mr, testing.Benchmark(message))
		} else {
			mr, rr = append(mr, testing.Benchmark(message)), append(rr, testing.Benchmark(record))
		}
	}
	out := &UsageRun{RecordNs: Median(field(rr, nsPerOp)), BaselineNs: Median(field(mr, nsPerOp)),
		Ratio: PairedRatios(field(rr, nsPerOp), field(mr, nsPerOp)), AllocsPer: Median(field(rr, allocsPerOp))}
	cfg.Logf("usage: %.0f µs per turn's record (a message %.0f µs, ×%.2f)", out.RecordNs/1e3, out.BaselineNs/1e3, out.Ratio)
	return out, nil
}

// usageSession makes a workspace, a task and a session on st.
func usageSession(ctx context.Context, st *store.Store) (*kanban.Session, error) {
	ws, err := st.CreateWorkspace(ctx, "Usage", "")
	if err != nil {
		return nil, err
	}
	wf, err := st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	if err != nil {
		return nil, err
	}
	if _, err := st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Work"}); err != nil {
		return nil, err
	}
	t, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: "usage"})
	if err != nil {
		return nil, err
	}
	sess, _, err := st.CreateSession(ctx, kanban.SessionCreate{TaskID: t.ID})
	return sess, err
}

func writeUsage(b *strings.Builder, r *Results) {
	b.WriteString("## 15. Recording usage\n\n")
	u := r.Usage
	if u == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "At the end of every turn the runtime records the agent's reported usage: the session's totals and a turn "+
		"row (the newest %d kept) in one write transaction on the real SQLite store, in process. The baseline, paired in the "+
		"same run, appends one conversation message, the smallest write a turn already makes.\n\n", kanban.MaxUsageTurnRows)
	b.WriteString("| figure | value |\n|---|---|\n")
	fmt.Fprintf(b, "| recording one turn's usage | %.1f µs, %.0f allocs |\n", u.RecordNs/1e3, u.AllocsPer)
	fmt.Fprintf(b, "| baseline (one message appended) | %.1f µs |\n", u.BaselineNs/1e3)
	fmt.Fprintf(b, "| usage record / message | ×%.2f |\n\n", u.Ratio)
}
