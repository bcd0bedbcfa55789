// Command operator runs the hexagonal operator: the ReplicaSet and ChaosPod
// controllers, their admission and conversion webhooks, metrics and health
// probes. See the README for flags.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
	_, _ = fmt.Fprintln(stderr, "operator: the runtime is not wired yet")
	return 1
}
