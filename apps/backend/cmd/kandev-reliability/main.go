// Command kandev-reliability is `make reliability`: it runs Kandev's
// reliability scenarios at full scale (see internal/reliability), writes
// reliability/results.json and renders docs/public/reliability.md from
// that file.
//
//	kandev-reliability run --kandev bin/kandev --fault-agent bin/faultagent --results R --docs D [--only a,b]
//	kandev-reliability docs --results R --docs D    re-render the page
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kandev/kandev/apps/backend/internal/reliability"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kandev-reliability:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: kandev-reliability run|docs [flags]")
	}
	fs := flag.NewFlagSet("kandev-reliability "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	results := fs.String("results", "reliability/results.json", "results file")
	docs := fs.String("docs", "docs/public/reliability.md", "page to generate from the results file (empty: none)")
	switch args[0] {
	case "docs":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		_, err := writeDocs(*results, *docs)
		return err
	case "run":
		kandev := fs.String("kandev", "bin/kandev", "kandev binary under test")
		fault := fs.String("fault-agent", "bin/faultagent", "the misbehaving test agent (go build ./internal/reliability/faultagent)")
		only := fs.String("only", "", "comma-separated scenarios to run (default all: "+strings.Join(reliability.Names, ",")+")")
		work := fs.String("workdir", "", "scratch directory (default: a temporary one, removed afterwards)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return runAll(ctx, runFlags{kandev: *kandev, fault: *fault, only: *only, work: *work, results: *results, docs: *docs, args: args}, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

type runFlags struct {
	kandev, fault, only, work, results, docs string
	args                                     []string
}

func runAll(ctx context.Context, f runFlags, stdout, stderr io.Writer) error {
	kbin, err := filepath.Abs(f.kandev)
	if err != nil {
		return err
	}
	fbin, err := filepath.Abs(f.fault)
	if err != nil {
		return err
	}
	work := f.work
	if work == "" {
		if work, err = os.MkdirTemp("", "kandev-reliability-"); err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(work) }() // scratch only
	}
	env := &reliability.Env{KandevBin: kbin, WorkDir: work,
		Logf: func(format string, a ...any) { _, _ = fmt.Fprintf(stderr, "kandev-reliability: "+format+"\n", a...) }}
	var only []string
	if f.only != "" {
		only = strings.Split(f.only, ",")
	}
	r, err := reliability.Run(ctx, env, reliability.FullScale(fbin), only)
	if err != nil {
		return err
	}
	r.Commands = []string{"make reliability", "# which runs, in apps/backend:", "make build",
		"go build -o bin/faultagent ./internal/reliability/faultagent",
		"go build -o bin/kandev-reliability ./cmd/kandev-reliability",
		"bin/kandev-reliability " + strings.Join(f.args, " ")}
	if err := r.WriteFile(f.results); err != nil {
		return err
	}
	if f.docs != "" {
		// The page is rendered from the file just written, not from memory.
		if r, err = writeDocs(f.results, f.docs); err != nil {
			return err
		}
	}
	for _, s := range r.Scenarios {
		_, _ = fmt.Fprintf(stdout, "%-13s %-8s %6.1f s  writes checked %d, lost %d%s\n", s.Name, status(s), s.Seconds, s.WritesChecked, s.Lost, note(s))
	}
	if failed := r.Failed(); len(failed) > 0 {
		return fmt.Errorf("scenarios failed: %s (see %s)", strings.Join(failed, ", "), f.results)
	}
	return nil
}

func status(s reliability.Scenario) string {
	switch {
	case s.Skipped != "":
		return "SKIPPED"
	case s.Passed:
		return "passed"
	}
	return "FAILED"
}

func note(s reliability.Scenario) string {
	switch {
	case s.Skipped != "":
		return " (" + s.Skipped + ")"
	case s.Error != "":
		return " (" + s.Error + ")"
	}
	return ""
}

func writeDocs(results, docs string) (*reliability.Results, error) {
	r, err := reliability.ReadFile(results)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(docs, []byte(reliability.Page(r)), 0o644); err != nil { //nolint:gosec // a published docs page
		return nil, fmt.Errorf("write docs: %w", err)
	}
	return r, nil
}
