package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
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
