package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// checkDurability kills the backend with SIGKILL (no shutdown, no final
// checkpoint: its database is left as a crash leaves it), opens the
// database in process and counts the tasks the bench's creates made
// (prefill and create_task_kandev calls, by their titles): every one of
// the acked acknowledged creates must be there.
func checkDurability(ctx context.Context, be *backendProc, dataDir string, acked int) (*Durability, error) {
	if err := be.kill(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dataDir)
	if err != nil {
		return nil, fmt.Errorf("open the killed backend's database: %w", err)
	}
	var n int
	qerr := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE title IN (?, ?)`,
		"Benchmark task", "Benchmark task with a long prompt").Scan(&n)
	if err := errors.Join(qerr, st.Close()); err != nil {
		return nil, fmt.Errorf("count the created tasks: %w", err)
	}
	return &Durability{Acknowledged: acked, Found: n}, nil
}
