// Command kandev is the Kandev backend, its per-session MCP server and the
// operator CLI. It hands its arguments and a context that ends on SIGINT
// or SIGTERM to internal/app; nothing else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kandev/kandev/apps/backend/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Main(ctx, os.Args[1:], app.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kandev:", err)
		}
		os.Exit(2)
	}
}
