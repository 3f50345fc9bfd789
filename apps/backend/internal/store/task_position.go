package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
)

// A task's tasks.position is a sparse sort key, unique within its step;
// the 0-based position callers see (kanban.Task.Position) is the task's
// rank in its step, archived tasks included, as the dense positions were.
// A move writes one key, halfway between its new neighbours' keys; only
// when they leave no room is the step renumbered, keyGap apart (in the
// same transaction). task_blocks (kept by triggers, migration 0023)
// counts a step's tasks per block of keys (key >> blockShift), so a rank
// is the sum of the counts of the blocks before the task's plus the
// task's place in its own block, and the key at a rank is found the same
// way: neither counts over the whole step.
const (
	keyGap     = 1 << 20 // between renumbered keys, and after the last for an append
	blockShift = 30      // a block spans 1<<30 keys: 1,024 keys keyGap apart (migration 0023 says 30 too)
)

// rankOf is the SQL expression of the rank in its step of the tasks row
// alias (our own constant): the tasks of the blocks before its block, then
// those of its block with smaller keys, counted from the nearer end of
// the block (idx_tasks_step): from its start in the block's lower half,
// else the block's count less the keys from the task's to the block's end.
func rankOf(alias string) string {
	shift := strconv.Itoa(blockShift)
	step, key := alias+`.workflow_step_id`, alias+`.position`
	block := `(` + key + ` >> ` + shift + `)`
	start := `(` + block + ` << ` + shift + `)`
	return `((SELECT COALESCE(SUM(rb.n), 0) FROM task_blocks rb WHERE rb.step_id = ` + step + ` AND rb.block < ` + block + `)
	+ CASE WHEN ` + key + ` - ` + start + ` < ` + strconv.Itoa(1<<(blockShift-1)) + `
	THEN (SELECT COUNT(*) FROM tasks rt WHERE rt.workflow_step_id = ` + step + ` AND rt.position >= ` + start + ` AND rt.position < ` + key + `)
	ELSE (SELECT rb.n FROM task_blocks rb WHERE rb.step_id = ` + step + ` AND rb.block = ` + block + `)
		- (SELECT COUNT(*) FROM tasks rt WHERE rt.workflow_step_id = ` + step + ` AND rt.position >= ` + key + `
			AND rt.position < ` + start + ` + ` + strconv.Itoa(1<<blockShift) + `) END)`
}

// stepBlock is one row of task_blocks: n tasks of a step with keys in
// [block<<blockShift, (block+1)<<blockShift).
type stepBlock struct {
	block int64
	n     int
}

// stepBlocks returns the non-empty blocks of stepID in key order.
func stepBlocks(ctx context.Context, q queryer, stepID string) ([]stepBlock, error) {
	scan := func(r rowSource) (*stepBlock, error) {
		var b stepBlock
		return &b, r.Scan(&b.block, &b.n)
	}
	bs, err := scanAll(ctx, q, scan, `SELECT block, n FROM task_blocks WHERE step_id = ? AND n > 0 ORDER BY block`, stepID)
	if err != nil {
		return nil, fmt.Errorf("step blocks: %w", err)
	}
	return bs, nil
}

// keysFrom returns the keys of up to limit tasks of stepID from rank r
// on, given the step's blocks; r must be below the step's task count.
func keysFrom(ctx context.Context, q queryer, stepID string, blocks []stepBlock, r, limit int) ([]int64, error) {
	before := 0
	for _, b := range blocks {
		if r < before+b.n {
			scan := func(rs rowSource) (*int64, error) {
				var k int64
				return &k, rs.Scan(&k)
			}
			keys, err := scanAll(ctx, q, scan, `SELECT position FROM tasks WHERE workflow_step_id = ? AND position >= ?
				ORDER BY position, id LIMIT ? OFFSET ?`, stepID, b.block<<blockShift, limit, r-before)
			if err != nil {
				return nil, fmt.Errorf("keys at rank: %w", err)
			}
			return keys, nil
		}
		before += b.n
	}
	return nil, fmt.Errorf("keys at rank: rank %d beyond the step's %d tasks", r, before)
}

// stepSize returns how many tasks stepID holds, archived ones included.
func stepSize(blocks []stepBlock) int {
	n := 0
	for _, b := range blocks {
		n += b.n
	}
	return n
}

// placement is where a task goes on a step: the rank it takes among the
// step's other tasks.
type placement struct {
	stepID string
	// from is the task's current rank when it is already on the step
	// (it is then skipped in the step's order), else -1.
	from int
	rank int // 0..others
}

// keyFor returns a key that puts the task at pl.rank among the step's
// other tasks, renumbering the step first when its neighbours there
// leave no room between their keys.
func keyFor(ctx context.Context, tx txn, pl placement, blocks []stepBlock, others int) (int64, error) {
	for attempt := 0; ; attempt++ {
		lo, hi, hasHi, err := neighbourKeys(ctx, tx, pl, blocks, others)
		if err != nil {
			return 0, err
		}
		switch {
		case !hasHi:
			return lo + keyGap, nil
		case hi-lo >= 2:
			return lo + (hi-lo)/2, nil
		case attempt > 0:
			return 0, fmt.Errorf("place task: no room between keys %d and %d after renumbering", lo, hi)
		}
		if err := renumberStep(ctx, tx, pl.stepID); err != nil {
			return 0, err
		}
		if blocks, err = stepBlocks(ctx, tx, pl.stepID); err != nil {
			return 0, err
		}
	}
}

// neighbourKeys returns the keys of the tasks that will be before (lo; 0
// when none) and after (hi, when hasHi) the placed task, read in one
// statement.
func neighbourKeys(ctx context.Context, tx txn, pl placement, blocks []stepBlock, others int) (lo, hi int64, hasHi bool, err error) {
	// Rank r among the others is rank r, or r+1 past the task itself,
	// among all the step's tasks.
	all := func(r int) int {
		if pl.from >= 0 && r >= pl.from {
			return r + 1
		}
		return r
	}
	if others == 0 {
		return 0, 0, false, nil
	}
	first, last := all(max(pl.rank-1, 0)), all(min(pl.rank, others-1))
	keys, err := keysFrom(ctx, tx, pl.stepID, blocks, first, last-first+1)
	if err != nil {
		return 0, 0, false, err
	}
	if len(keys) != last-first+1 {
		return 0, 0, false, fmt.Errorf("keys at rank: got %d keys from rank %d, want %d", len(keys), first, last-first+1)
	}
	switch pl.rank {
	case 0:
		return 0, keys[len(keys)-1], true, nil
	case others:
		return keys[0], 0, false, nil
	}
	return keys[0], keys[len(keys)-1], true, nil
}

// renumberStep gives stepID's tasks keys keyGap apart in their order.
// It is O(tasks on the step) and runs only when a move finds no room.
func renumberStep(ctx context.Context, tx txn, stepID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET position = r.rn * ? FROM
		(SELECT id, ROW_NUMBER() OVER (ORDER BY position, id) AS rn FROM tasks WHERE workflow_step_id = ?) AS r
		WHERE tasks.id = r.id`, int64(keyGap), stepID); err != nil {
		return fmt.Errorf("renumber step: %w", err)
	}
	return nil
}

// TaskKey is the stored tasks.position of the task at 0-based position
// rank of a step whose keys are keyGap apart, for loaders that write
// tasks rows directly (the triggers keep task_blocks for them).
func TaskKey(rank int) int64 { return int64(rank+1) * keyGap }

// maxRankSpan bounds the keys fillRanks reads for one page: a page whose
// tasks lie further apart (a filter that skips most of a step) has the
// rest ranked one by one.
const maxRankSpan = 4096

// fillRanks sets the positions of a page's tasks from their keys: per
// step, the step's keys from the page's first task there to its last, with
// the first's rank as rankOf computes it, in one statement, so that a page
// costs one rank per step, not one per task. Tasks further apart than
// maxRankSpan keys (a filter that skips most of a step, tasks moved far
// apart) are ranked one by one.
func fillRanks[T any](ctx context.Context, q queryer, items []T, ranks func(*T) (string, int64, *int)) error {
	type ref struct {
		key int64
		pos *int
	}
	bySteps := map[string][]ref{}
	var steps []string
	for i := range items {
		st, key, pos := ranks(&items[i])
		if _, seen := bySteps[st]; !seen {
			steps = append(steps, st)
		}
		bySteps[st] = append(bySteps[st], ref{key, pos})
	}
	for _, st := range steps {
		refs := bySteps[st]
		slices.SortFunc(refs, func(a, b ref) int { return cmp.Compare(a.key, b.key) })
		span, err := keySpan(ctx, q, st, refs[0].key, refs[len(refs)-1].key)
		if err != nil {
			return err
		}
		j := 0
		for _, r := range refs {
			for j < len(span) && span[j][1] < r.key {
				j++
			}
			if j < len(span) && span[j][1] == r.key {
				*r.pos = int(span[0][0]) + j
				continue
			}
			if err := q.QueryRowContext(ctx, `SELECT `+rankOf("tasks")+` FROM tasks WHERE workflow_step_id = ? AND position = ? LIMIT 1`,
				st, r.key).Scan(r.pos); err != nil {
				return fmt.Errorf("rank: %w", err)
			}
		}
	}
	return nil
}

// keySpan returns up to maxRankSpan keys of step from first to last, in
// order, each with the rank of first.
func keySpan(ctx context.Context, q queryer, step string, first, last int64) ([][2]int64, error) {
	block := first >> blockShift
	scan := func(r rowSource) (*[2]int64, error) {
		var v [2]int64
		return &v, r.Scan(&v[0], &v[1])
	}
	span, err := scanAll(ctx, q, scan, `SELECT (SELECT COALESCE(SUM(n), 0) FROM task_blocks WHERE step_id = ? AND block < ?)
		+ (SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ? AND position >= ? AND position < ?), position
		FROM tasks WHERE workflow_step_id = ? AND position >= ? AND position <= ? ORDER BY position LIMIT ?`,
		step, block, step, block<<blockShift, first, step, first, last, maxRankSpan)
	if err != nil {
		return nil, fmt.Errorf("rank: %w", err)
	}
	return span, nil
}
