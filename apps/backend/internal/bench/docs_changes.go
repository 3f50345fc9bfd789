package bench

import (
	"fmt"
	"strings"
)

// writeChanges renders section 12.
func writeChanges(b *strings.Builder, r *Results) {
	b.WriteString("## 12. A task's changes\n\n")
	b.WriteString("What reading a task's changes costs the server (see [review and ship](review-and-ship.md)): " +
		"`task.changes.list` (first page of 200) and `task.changes.diff` of one file, dispatched through the action " +
		"registry in process on the real SQLite store and real git, each against plain git run in the same worktree " +
		"in the same repetition; and what the operator waits for: the task page's Changes tab drawn in a browser.\n\n")
	c := r.Changes
	if c == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "A %d-file change (800 modified, 100 deleted, 100 new untracked files of 40 lines), %d repetitions:\n\n", c.Files, c.List.Samples)
	b.WriteString("| call | p50 / p99 | plain git baseline | its p50 / p99 | call / baseline (p50 of paired ratios) |\n|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| `task.changes.list` | %.1f / %.1f ms | `git diff --numstat -M <merge-base>` | %.1f / %.1f ms | %.2f× |\n",
		c.List.P50Ms, c.List.P99Ms, c.GitNumstat.P50Ms, c.GitNumstat.P99Ms, c.ListOverGit)
	fmt.Fprintf(b, "| `task.changes.diff` | %.1f / %.1f ms | `git diff <merge-base> -- <file>` | %.1f / %.1f ms | %.2f× |\n\n",
		c.Diff.P50Ms, c.Diff.P99Ms, c.GitFileDiff.P50Ms, c.GitFileDiff.P99Ms, c.DiffOverGit)
	b.WriteString("The list runs three git commands (merge-base, status with untracked files, diff with rename detection and " +
		"line counts) and reads the new files to count their lines; the baseline is the diff alone, so the ratio is what " +
		"the complete picture (staged, unstaged and untracked, renames, binary and size checks) costs over it.\n\n")
	fmt.Fprintf(b, "The Changes tab in Debian's headless Chromium, on a `kandev serve` of the same change: from the click on the "+
		"tab of a freshly loaded task page to the page's `changes-rendered` mark (the repository's totals, its first page of "+
		"100 files, the review and pull request panels drawn), median of %d loads: **%.0f ms**.\n\n", c.TabLoads, c.TabLoadMs)
}
