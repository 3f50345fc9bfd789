package worktree

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Benchmarks of a 1,000-file change (800 modified, 100 deleted, 100 new
// untracked files in a 1,000-file repository), each reporting its p50
// next to the baselines measured in the same run: `git status` and
// `git diff --numstat` alone, as this package runs them. Run with
//
//	go test -run '^$' -bench . ./internal/worktree/
//
// Issue 25's target: the changes list and one file's diff at most 200 ms
// server side.

const benchFiles = 1000

func benchTree(b *testing.B) *fixture {
	b.Helper()
	files := make(map[string]string, benchFiles)
	for i := range benchFiles {
		files[benchPath(i)] = lines(fmt.Sprintf("file %d", i), 40)
	}
	repo := gittest.NewRepo(b, files)
	wt := repo.Worktree(b, taskBranch, "main")
	g, err := NewGit(Config{Identity: testIdentity})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close() })
	tree, err := g.Open(b.Context(), Spec{Dir: wt, Repo: repo.Dir, Base: "main", Branch: taskBranch})
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchFiles {
		switch {
		case i < 800:
			body := strings.Replace(lines(fmt.Sprintf("file %d", i), 40), "line x\n", "line CHANGED\n", 1)
			gittest.WriteFile(b, wt, benchPath(i), body+"appended\n")
		case i < 900:
			gittest.Run(b, wt, "rm", "--quiet", "--cached", benchPath(i))
			gittest.Run(b, wt, "clean", "--quiet", "-f", "--", benchPath(i))
		default:
			gittest.WriteFile(b, wt, "new/"+benchPath(i), lines("new", 20))
		}
	}
	return &fixture{g: g, repo: repo, wt: wt, tree: tree}
}

func benchPath(i int) string { return fmt.Sprintf("pkg%02d/file%04d.go", i%50, i) }

// p50 runs f b.N times and reports the median in milliseconds.
func p50(b *testing.B, f func() error) {
	b.Helper()
	var d []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
}

func BenchmarkChanges1000(b *testing.B) {
	f := benchTree(b)
	list, err := f.tree.Changes(b.Context(), kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		b.Fatal(err)
	}
	if list.Total != benchFiles {
		b.Fatalf("got %d changes, want %d", list.Total, benchFiles)
	}
	b.Run("changes-page", func(b *testing.B) {
		p50(b, func() error {
			_, err := f.tree.Changes(b.Context(), kanban.Page{Limit: kanban.MaxLimit})
			return err
		})
	})
	b.Run("diff-one-file", func(b *testing.B) {
		p50(b, func() error {
			d, err := f.tree.Diff(b.Context(), DiffRequest{Path: benchPath(417)})
			if err == nil && !strings.Contains(d.Patch, "+appended") {
				err = fmt.Errorf("unexpected patch %q", d.Patch)
			}
			return err
		})
	})
	b.Run("baseline-git-status", func(b *testing.B) {
		p50(b, func() error {
			_, err := f.tree.output(b.Context(), "status", "status", "--porcelain=v2", "-z", "--untracked-files=all")
			return err
		})
	})
	b.Run("baseline-git-diff-numstat", func(b *testing.B) {
		p50(b, func() error {
			_, err := f.tree.output(b.Context(), "diff", "diff", "--numstat", "-z", "-M", list.MergeBase)
			return err
		})
	})
}
