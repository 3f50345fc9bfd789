// Command kandev-bench is `make bench`: it measures Kandev's MCP path
// against its floors (see internal/bench), writes bench/results.json and
// renders docs/public/performance.md from that file.
//
//	kandev-bench run --kandev bin/kandev --results R --docs D   measure everything
//	kandev-bench docs --results R --docs D                      re-render the page
//	kandev-bench floor-server --addr 127.0.0.1:0 [--same-bytes NAME=FILE]...
//	                                                            the transport floors (a child of run)
//	kandev-bench fixture                                        the upstream MCP fixture over stdio (a child of run)
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
	"strconv"
	"strings"
	"syscall"

	"github.com/kandev/kandev/apps/backend/internal/bench"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kandev-bench:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: kandev-bench run|docs|floor-server|fixture [flags]")
	}
	switch args[0] {
	case "run":
		return runBench(ctx, args[1:], stdout, stderr)
	case "docs":
		fs := flag.NewFlagSet("kandev-bench docs", flag.ContinueOnError)
		fs.SetOutput(stderr)
		results := fs.String("results", "bench/results.json", "results file to read")
		docs := fs.String("docs", "docs/public/performance.md", "page to write")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		_, err := writeDocs(*results, *docs)
		return err
	case "floor-server":
		fs := flag.NewFlagSet("kandev-bench floor-server", flag.ContinueOnError)
		fs.SetOutput(stderr)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		same := map[string][]byte{}
		fs.Func("same-bytes", "NAME=FILE: also serve tool NAME answering FILE's JSON as a Kandev tool result (repeatable)", func(v string) error {
			name, file, ok := strings.Cut(v, "=")
			if !ok || name == "" {
				return errors.New("want NAME=FILE")
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			same[name] = b
			return nil
		})
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return bench.ServeFloor(ctx, *addr, stdout, same)
	case "fixture":
		fixture.Main(ctx)
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kandev-bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kandev := fs.String("kandev", "bin/kandev", "kandev binary under test")
	results := fs.String("results", "bench/results.json", "results file to write")
	docs := fs.String("docs", "docs/public/performance.md", "page to generate from the results file (empty: none)")
	reps := fs.Int("reps", 5, "repetitions of every figure")
	microReps := fs.Int("micro-reps", 20, "repetitions of every validation micro benchmark")
	point := fs.Float64("point", 1.5, "seconds of measuring per load point")
	benchTime := fs.String("benchtime", "50ms", "testing.Benchmark time per micro benchmark")
	clients := fs.String("clients", "1,8,64", "concurrent clients of the round trips")
	bridgeClients := fs.String("bridge-clients", "1,8", "concurrent clients of the bridge comparison")
	tasks := fs.Int("store-tasks", 100_000, "tasks on the big board")
	writers := fs.Int("writers", 8, "concurrent writers of the sustained create rate")
	only := fs.String("only", "", "comma-separated sections to run (default all: "+strings.Join(bench.Sections, ",")+")")
	work := fs.String("workdir", "", "scratch directory (default: a temporary one, removed afterwards)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	kbin, err := filepath.Abs(*kandev)
	if err != nil {
		return err
	}
	cfg := bench.Config{KandevBin: kbin, BenchBin: self, WorkDir: *work, Reps: *reps, MicroReps: *microReps, Point: *point, BenchTime: *benchTime,
		StoreTasks: *tasks, StoreWriters: *writers,
		Logf: func(f string, a ...any) { _, _ = fmt.Fprintf(stderr, "kandev-bench: "+f+"\n", a...) }}
	if cfg.Clients, err = parseInts(*clients); err != nil {
		return err
	}
	if cfg.BridgeClients, err = parseInts(*bridgeClients); err != nil {
		return err
	}
	cleanup, err := prepareWorkDir(&cfg)
	defer cleanup()
	if err != nil {
		return err
	}
	var sections []string
	if *only != "" {
		sections = strings.Split(*only, ",")
	}
	r, err := bench.Run(ctx, cfg, sections)
	if err != nil {
		return err
	}
	r.Commands = benchCommands(args)
	if err := r.WriteFile(*results); err != nil {
		return err
	}
	if *docs != "" {
		// The page is rendered from the file just written, not from memory.
		if r, err = writeDocs(*results, *docs); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, bench.Summary(r))
	return err
}

// benchCommands is how the results were made: make bench, which runs
// kandev-bench run with args.
func benchCommands(args []string) []string {
	return []string{
		"make bench",
		"# which runs, in apps/backend:",
		"make build",
		"go build -o bin/kandev-bench ./cmd/kandev-bench",
		"bin/kandev-bench run " + strings.Join(args, " "),
	}
}

// prepareWorkDir makes cfg.WorkDir an absolute path to a directory that
// exists: a temporary one when none is given, which cleanup removes
// (cleanup is never nil, whatever the error).
func prepareWorkDir(cfg *bench.Config) (cleanup func(), err error) {
	cleanup = func() {}
	if cfg.WorkDir == "" {
		if cfg.WorkDir, err = os.MkdirTemp("", "kandev-bench-"); err != nil {
			return cleanup, err
		}
		scratch := cfg.WorkDir
		cleanup = func() { _ = os.RemoveAll(scratch) } // scratch only
	}
	if cfg.WorkDir, err = filepath.Abs(cfg.WorkDir); err != nil {
		return cleanup, err
	}
	return cleanup, os.MkdirAll(cfg.WorkDir, 0o700)
}

func writeDocs(results, docs string) (*bench.Results, error) {
	r, err := bench.ReadFile(results)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(docs, []byte(bench.Page(r)), 0o644); err != nil { //nolint:gosec // a published docs page
		return nil, fmt.Errorf("write docs: %w", err)
	}
	return r, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad client count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}
