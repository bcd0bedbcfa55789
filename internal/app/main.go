package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

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
//
// `name manifests [--output-dir=DIR] [flags]` prints instead what the
// wiring needs in a cluster for those flags ([Manifests]), or writes each
// file under DIR, a kustomize config folder.
func Main(name string, args []string, getenv func(string) string, stdout, stderr io.Writer, extra ...fx.Option) int {
	if len(args) > 0 && args[0] == "manifests" {
		return manifestsCommand(name, args[1:], getenv, stdout, stderr, extra)
	}
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
	// A declaration mistake is one line, before fx's logger (which the
	// graph it cannot build would provide) has a chance to add its own.
	if err := fx.ValidateApp(Options(cfg), fx.Options(extra...), fx.NopLogger); err != nil {
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, dig.RootCause(err))
		return 1
	}
	defer gcfloor.Start(cfg.GCHeapFloor).Stop()
	return serve(name, New(cfg, extra...), cfg, stderr)
}

// manifestsCommand is `name manifests`: the operator's flags, and
// --output-dir.
func manifestsCommand(name string, args []string, getenv func(string) string, stdout, stderr io.Writer, extra []fx.Option) int {
	dir, rest, err := outputDir(args)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s manifests: %v\n", name, err)
		return 2
	}
	cfg, err := config.Parse(rest, getenv)
	if errors.Is(err, config.ErrHelp) {
		_, _ = fmt.Fprintf(stdout, "Usage: %s manifests [--output-dir=DIR] [flags]\n\n"+
			"Prints the RBAC, webhook configurations and CRD conversion settings the\n"+
			"operator's wiring needs for the flags given, or writes each file under DIR.\n\n", name)
		config.Usage(stdout)
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s manifests: %v\n", name, err)
		return 2
	}
	files, err := Manifests(name, cfg, extra...)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "%s manifests: %v\n", name, dig.RootCause(err))
		return 1
	}
	for i, f := range files {
		if dir == "" {
			if i > 0 {
				_, _ = fmt.Fprintln(stdout, "---")
			}
			_, _ = stdout.Write(f.Content)
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			_, _ = fmt.Fprintf(stderr, "%s manifests: %v\n", name, err)
			return 1
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil { //nolint:gosec // manifests are meant to be read
			_, _ = fmt.Fprintf(stderr, "%s manifests: %v\n", name, err)
			return 1
		}
		_, _ = fmt.Fprintf(stderr, "wrote %s\n", path)
	}
	return 0
}

// outputDir takes --output-dir=DIR (or --output-dir DIR) out of args.
func outputDir(args []string) (dir string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--output-dir" || a == "-output-dir":
			if i+1 == len(args) {
				return "", nil, errors.New("flag needs an argument: --output-dir")
			}
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--output-dir=") || strings.HasPrefix(a, "-output-dir="):
			_, dir, _ = strings.Cut(a, "=")
		case a == "--":
			return dir, append(rest, args[i:]...), nil
		default:
			rest = append(rest, a)
		}
	}
	return dir, rest, nil
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
