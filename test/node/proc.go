package node

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// proc is one component the cluster runs: the control plane's process
// runner, which the node tier shares.
type proc = controlplane.Process

// startProc runs bin with args in its own process group, output to
// <dir>/<name>.log, killed should the test binary die first.
func startProc(name, bin, dir string, args ...string) (*proc, error) {
	return controlplane.StartProcess(name, bin, dir, args...)
}

// stopProc stops p as the teardown wants it: an error when SIGTERM was not
// enough.
func stopProc(p *proc, grace time.Duration) error {
	if err := p.Stop(grace); err != nil {
		return err
	}
	if p.Killed() {
		return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.Name(), grace)
	}
	return nil
}

// run runs a short command and returns its combined output; the error
// carries the output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// freePort asks the kernel for an unused TCP port on host.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// poll calls check every interval until it returns true or an error, or
// until timeout; the error of a timeout carries the last state described.
func poll(ctx context.Context, timeout, interval time.Duration, what string, check func(context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		ok, state, err := check(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %s (last: %s)", what, timeout, last)
		case <-time.After(interval):
		}
	}
}
