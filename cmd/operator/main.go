package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/gcfloor"
	"github.com/hexagonal-operator/operator/internal/version"
)

// defaultGCPercent is the garbage collector's target unless GOGC is set.
// The operator's heap is mostly its informer cache, long-lived objects
// that Go's default of 100 leaves room to double in garbage before each
// collection. 75 keeps less garbage beside the cache for somewhat more
// frequent collections; lower targets cost the webhooks, whose requests
// are mostly garbage, too much throughput (docs/performance.md).
// GOGC=100 restores Go's default.
const defaultGCPercent = 75

func main() {
	if gcPercent, ok := gcTarget(os.Getenv); ok {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// gcTarget is the GC percent to set, when the environment leaves it to the
// operator (no GOGC).
func gcTarget(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false // the runtime has read it already
	}
	return defaultGCPercent, true
}

// run is main without the process: it returns the exit code so tests can
// call it.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(stdout)
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "operator: %v\n", err)
		return 2
	}
	if cfg.Version {
		_, _ = fmt.Fprintln(stdout, version.String())
		return 0
	}
	defer gcfloor.Start(cfg.GCHeapFloor).Stop()
	return serve(app.New(cfg), cfg, stderr)
}

// serve starts the application, waits for SIGTERM/SIGINT (or an internal
// shutdown such as a lost Lease) and stops it within --shutdown-timeout.
func serve(a *fx.App, cfg config.Config, stderr io.Writer) int {
	if err := a.Err(); err != nil {
		_, _ = fmt.Fprintf(stderr, "operator: %v\n", dig.RootCause(err))
		return 1
	}
	startCtx, cancel := context.WithTimeout(context.Background(), a.StartTimeout())
	defer cancel()
	if err := a.Start(startCtx); err != nil {
		_, _ = fmt.Fprintf(stderr, "operator: start: %v\n", dig.RootCause(err))
		stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancelStop()
		_ = a.Stop(stopCtx)
		return 1
	}
	sig := <-a.Wait()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancelStop()
	if err := a.Stop(stopCtx); err != nil {
		_, _ = fmt.Fprintf(stderr, "operator: stop: %v\n", err)
		return 1
	}
	return sig.ExitCode
}
