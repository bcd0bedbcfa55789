package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// operatorBin is built once by TestMain.
var operatorBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "e2e-operator-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root, err := controlplane.RepoRoot()
	if err == nil {
		operatorBin, err = operatorproc.Build(root, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	p := operatorproc.Start(t, operatorBin, nil, "--version")
	require.Equal(t, 0, p.Wait(t, 10*time.Second))
	require.Contains(t, p.Output(), "hexagonal-operator")

	p = operatorproc.Start(t, operatorBin, nil, "--help")
	require.Equal(t, 0, p.Wait(t, 10*time.Second))
	require.Contains(t, p.Output(), "--leader-elect")
}

func TestBadFlagIsOneLineAndExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--no-such-flag"}, {"--webhook-port=http"}, {"--zap-stacktrace-level=verbose"}, {"--zap-time-encoding=unix"}} {
		p := operatorproc.Start(t, operatorBin, nil, args...)
		require.Equal(t, 2, p.Wait(t, 10*time.Second))
		out := strings.TrimRight(p.Output(), "\n")
		require.NotContains(t, out, "\n", "exactly one line: %q", out)
		require.Contains(t, out, strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0])
	}
	p := operatorproc.Start(t, operatorBin, []string{"OPERATOR_SHUTDOWN_TIMEOUT=later"})
	require.Equal(t, 2, p.Wait(t, 10*time.Second))
	require.Contains(t, p.Output(), "OPERATOR_SHUTDOWN_TIMEOUT")
}

func TestUnreachableClusterFailsFastWithoutPanic(t *testing.T) {
	t.Parallel()
	port := operatorproc.FreePorts(t, 1)[0] // nothing listens there
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, port)), 0o600))
	ports := operatorproc.FreePorts(t, 3)
	began := time.Now()
	p := operatorproc.Start(t, operatorBin, nil, "--kubeconfig="+kubeconfig,
		"--webhook-cert-dir="+t.TempDir(), "--webhook-port="+strconv.Itoa(ports[0]),
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(ports[2]))
	code := p.Wait(t, 40*time.Second)
	require.NotEqual(t, 0, code)
	require.Less(t, time.Since(began), 31*time.Second)
	require.NotContains(t, p.Output(), "goroutine ")
	require.NotContains(t, p.Output(), "panic")

	p = operatorproc.Start(t, operatorBin, nil, "--kubeconfig=/does/not/exist", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	require.NotEqual(t, 0, p.Wait(t, 40*time.Second))
	require.Contains(t, p.Output(), "/does/not/exist")
}

func TestGracefulStopOnSIGTERM(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	p := operatorproc.RunAgainst(t, operatorBin, cp, "--shutdown-timeout=10s", "--controllers=replicaset")
	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.Wait(t, 15*time.Second))
}
