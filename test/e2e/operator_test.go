package e2e_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// operatorBin is built once by TestMain.
var operatorBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "e2e-operator-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	operatorBin = filepath.Join(dir, "operator")
	root, err := controlplane.RepoRoot()
	if err == nil {
		cmd := exec.Command("go", "build", "-o", operatorBin, "./cmd/operator")
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		err = cmd.Run()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "build operator: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// process is a running operator binary.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error
	// Health is the base URL of the health probes.
	Health string
	// Metrics is the base URL of the plain-HTTP metrics endpoint.
	Metrics string
	// Webhook is the host:port of the webhook server.
	Webhook string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startOperator runs the binary with args; it is killed in t.Cleanup if
// still running, and its output is printed when the test failed.
func startOperator(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(operatorBin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("operator output:\n%s", p.out.String())
		}
	})
	return p
}

// wait returns the exit code, failing the test after timeout.
func (p *process) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Fatalf("operator still running after %s", timeout)
	}
	if p.err == nil {
		return 0
	}
	if ee, ok := p.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("operator: %v", p.err)
	return -1
}

// runOperatorAgainst starts the operator against cp with free ports and
// plain metrics, and waits until /readyz answers 200.
func runOperatorAgainst(t *testing.T, cp *controlplane.ControlPlane, extra ...string) *process {
	t.Helper()
	ports := freePorts(t, 3)
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	args := append([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--webhook-port=" + strconv.Itoa(ports[0]),
		"--webhook-cert-dir=" + certDir,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
	}, extra...)
	p := startOperator(t, nil, args...)
	p.Metrics = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	p.Health = "http://127.0.0.1:" + strconv.Itoa(ports[2])
	p.Webhook = "127.0.0.1:" + strconv.Itoa(ports[0])
	require.Eventually(t, func() bool {
		select {
		case <-p.exited:
			t.Fatalf("operator exited early:\n%s", p.out.String())
		default:
		}
		return httpStatus(p.Health+"/readyz") == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "operator ready")
	return p
}

func httpStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { _ = l.Close() }()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	p := startOperator(t, nil, "--version")
	require.Equal(t, 0, p.wait(t, 10*time.Second))
	require.Contains(t, p.out.String(), "hexagonal-operator")

	p = startOperator(t, nil, "--help")
	require.Equal(t, 0, p.wait(t, 10*time.Second))
	require.Contains(t, p.out.String(), "--leader-elect")
}

func TestBadFlagIsOneLineAndExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--no-such-flag"}, {"--webhook-port=http"}} {
		p := startOperator(t, nil, args...)
		require.Equal(t, 2, p.wait(t, 10*time.Second))
		out := strings.TrimRight(p.out.String(), "\n")
		require.NotContains(t, out, "\n", "exactly one line: %q", out)
		require.Contains(t, out, strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0])
	}
	p := startOperator(t, []string{"OPERATOR_SHUTDOWN_TIMEOUT=later"})
	require.Equal(t, 2, p.wait(t, 10*time.Second))
	require.Contains(t, p.out.String(), "OPERATOR_SHUTDOWN_TIMEOUT")
}

func TestUnreachableClusterFailsFastWithoutPanic(t *testing.T) {
	t.Parallel()
	port := freePorts(t, 1)[0] // nothing listens there
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, port)), 0o600))
	ports := freePorts(t, 3)
	began := time.Now()
	p := startOperator(t, nil, "--kubeconfig="+kubeconfig,
		"--webhook-cert-dir="+t.TempDir(), "--webhook-port="+strconv.Itoa(ports[0]),
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(ports[2]))
	code := p.wait(t, 40*time.Second)
	require.NotEqual(t, 0, code)
	require.Less(t, time.Since(began), 31*time.Second)
	require.NotContains(t, p.out.String(), "goroutine ")
	require.NotContains(t, p.out.String(), "panic")

	p = startOperator(t, nil, "--kubeconfig=/does/not/exist", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	require.NotEqual(t, 0, p.wait(t, 40*time.Second))
	require.Contains(t, p.out.String(), "/does/not/exist")
}

func TestGracefulStopOnSIGTERM(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	p := runOperatorAgainst(t, cp, "--shutdown-timeout=10s", "--controllers=replicaset")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.wait(t, 15*time.Second))
}
