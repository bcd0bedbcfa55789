package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"go.uber.org/dig"
	"go.uber.org/fx"

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

// Main is the whole of an operator command, cmd/operator's and the
// examples': it parses args (without the program name) and the
// environment's OPERATOR_* twins, runs the operator with extra options
// until SIGTERM or SIGINT, and returns the exit code: 0 after a clean stop
// or --help/--version, 1 when start or stop fails, 2 for a bad flag. name
// prefixes its one-line errors.
//
//	func main() { os.Exit(app.Main("operator", os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }
func Main(name string, args []string, getenv func(string) string, stdout, stderr io.Writer, extra ...fx.Option) int {
	if gcPercent, ok := gcTarget(getenv); ok {
		debug.SetGCPercent(gcPercent)
	}
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(stdout)
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if cfg.Version {
		_, _ = fmt.Fprintln(stdout, version.String())
		return 0
	}
	defer gcfloor.Start(cfg.GCHeapFloor).Stop()
	return serve(name, New(cfg, extra...), cfg, stderr)
}

// gcTarget is the GC percent to set, when the environment leaves it to the
// operator (no GOGC).
func gcTarget(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false // the runtime has read it already
	}
	return defaultGCPercent, true
}

// serve starts the application, waits for SIGTERM/SIGINT (or an internal
// shutdown such as a lost Lease) and stops it within --shutdown-timeout.
func serve(name string, a *fx.App, cfg config.Config, stderr io.Writer) int {
	if err := a.Err(); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, dig.RootCause(err))
		return 1
	}
	startCtx, cancel := context.WithTimeout(context.Background(), a.StartTimeout())
	defer cancel()
	if err := a.Start(startCtx); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: start: %v\n", name, dig.RootCause(err))
		stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancelStop()
		_ = a.Stop(stopCtx)
		return 1
	}
	sig := <-a.Wait()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancelStop()
	if err := a.Stop(stopCtx); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: stop: %v\n", name, err)
		return 1
	}
	return sig.ExitCode
}
