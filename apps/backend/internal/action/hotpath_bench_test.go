package action

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// The hot path of make bench's round trips, below the MCP layer: the
// actions create_task_kandev and list_tasks_kandev dispatch, on a real
// seeded SQLite store, from 8 concurrent callers.

func benchRegistry(b *testing.B) *Registry {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := st.Seed(ctx); err != nil {
		b.Fatalf("seed: %v", err)
	}
	reg, _ := New(Deps{Store: st, Publisher: &recorder{}})
	return reg
}

func benchDispatch(b *testing.B, reg *Registry, name kanban.Action, raw json.RawMessage) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := reg.Dispatch(ctx, Principal{Kind: Operator}, name, raw); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkDispatchTaskCreate is create_task_kandev's action: a task, its
// session and its first message.
func BenchmarkDispatchTaskCreate(b *testing.B) {
	reg := benchRegistry(b)
	benchDispatch(b, reg, kanban.ActionTaskCreate, json.RawMessage(`{"title":"Benchmark task","prompt":"Created by a benchmark."}`))
}

// BenchmarkDispatchTaskList5 is list_tasks_kandev's action with a 5-task
// page of the default workspace.
func BenchmarkDispatchTaskList5(b *testing.B) {
	reg := benchRegistry(b)
	ctx := context.Background()
	for range 10 {
		if _, err := reg.Dispatch(ctx, Principal{Kind: Operator}, kanban.ActionTaskCreate, json.RawMessage(`{"title":"Listed task","start_agent":false}`)); err != nil {
			b.Fatal(err)
		}
	}
	benchDispatch(b, reg, kanban.ActionTaskList, json.RawMessage(`{"limit":5}`))
}
