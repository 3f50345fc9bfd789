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
	if err := Seed(ctx, st); err != nil {
		b.Fatalf("seed: %v", err)
	}
	reg, _ := mustNew(b, Deps{Store: st, Publisher: &recorder{}})
	return reg
}

func benchDispatch(b *testing.B, reg *Registry, name kanban.Action, raw json.RawMessage) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer() // the store, its seed and the compiled contracts are setup
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

// BenchmarkDispatchTaskUpdateScope is update_task_kandev's action from a
// task session (--session-scope tree): on its own task (no walk), and on
// a task three parent links below it, whose write scope is checked by
// walking up to it.
func BenchmarkDispatchTaskUpdateScope(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := Seed(ctx, st); err != nil {
		b.Fatal(err)
	}
	reg, _ := mustNew(b, Deps{Store: st, Publisher: &recorder{}})
	create := func(parent string) *kanban.Task {
		ws, err := st.DefaultWorkspaceID(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws, Title: "t", ParentID: parent})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	root := create("")
	deep := create(create(create(root.ID).ID).ID)
	sess, _, err := st.CreateSession(ctx, kanban.SessionCreate{TaskID: root.ID})
	if err != nil {
		b.Fatal(err)
	}
	p := Principal{Kind: Session, SessionID: sess.ID, TaskID: root.ID, WorkspaceID: root.WorkspaceID}
	for name, target := range map[string]string{"self": "self", "depth3": deep.ID} {
		raw := json.RawMessage(`{"task_id":"` + target + `","description":"benchmark"}`)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Dispatch(ctx, p, kanban.ActionTaskUpdate, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
