package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// TestMain lets the test binary serve as the echo webhook, as the driver's
// binary does: the webhook workloads re-execute their own executable.
func TestMain(m *testing.M) {
	if echoRequested() {
		runEcho()
	}
	os.Exit(m.Run())
}

// Every workload of the driver runs once, at a hundredth of its scale and
// without a warm-up, against its own control plane and the release build
// of the operator: the figures mean nothing here, but a workload that no
// longer converges, or a driver that no longer starts, fails `make test`
// instead of the next benchmark session.
func TestEveryWorkloadRunsAtATinyScale(t *testing.T) {
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	bin, err := operatorproc.BuildRelease(root, t.TempDir())
	require.NoError(t, err)
	plot := filepath.Join(t.TempDir(), "scale.svg")
	opts, err := parseFlags([]string{
		"--operator=" + bin,
		"--scale=0.01",
		"--warmup=false",
		"--chaos-duration=3s",
		"--chaos-interval=1s", // a stop every second, so the window holds some
		"--timeout=2m",
		"--scale-n=10000", // the scale workload at N=100
		"--plot=" + plot,
	})
	require.NoError(t, err)
	require.ElementsMatch(t, workloadNames(), opts.workloads, "every workload, by default")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, run(ctx, opts))
	svg, err := os.ReadFile(plot)
	require.NoError(t, err)
	require.Contains(t, string(svg), "200 objects:", "the scale workload's point")
}
