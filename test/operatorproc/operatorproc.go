package operatorproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// ReadyTimeout bounds how long RunAgainst waits for /readyz.
const ReadyTimeout = 60 * time.Second

// httpClient has a timeout so that a probe of a stopped or wedged process
// answers "unreachable" instead of hanging a poll loop.
var httpClient = &http.Client{Timeout: 2 * time.Second}

// Build compiles ./cmd/operator of the module at repoRoot into dir and
// returns the binary's path. When this test binary runs with the race
// detector, the operator is built with it too, so that a race in the
// process under test fails the test as one in the test itself would;
// otherwise it is built as `make build` builds it, static and stripped.
func Build(repoRoot, dir string) (string, error) {
	return build(repoRoot, filepath.Join(dir, "operator"), raceEnabled)
}

// BuildRelease compiles ./cmd/operator as `make build` does, whatever this
// test binary runs with, into dir as operator-release. It is for tests that
// hold the process to a memory or latency budget, which the race detector
// inflates several times over.
func BuildRelease(repoRoot, dir string) (string, error) {
	return build(repoRoot, filepath.Join(dir, "operator-release"), false)
}

func build(repoRoot, bin string, race bool) (string, error) {
	env, flags := buildFlags(race)
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, "./cmd/operator")...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build operator (%s %s): %w: %s", strings.Join(env, " "), strings.Join(flags, " "), err, strings.TrimSpace(out.String()))
	}
	return bin, nil
}

// buildFlags returns the environment and the go build flags of the operator
// binary. The race detector needs cgo, which the release build turns off to
// be static; the release build's own flags mirror the Makefile's GO_BUILD.
func buildFlags(race bool) (env, flags []string) {
	if race {
		return []string{"CGO_ENABLED=1"}, []string{"-race"}
	}
	return []string{"CGO_ENABLED=0"}, []string{"-trimpath", "-ldflags", "-s -w"}
}

// Process is a running (or exited) operator binary.
type Process struct {
	// Health is the base URL of the health probes ("" unless RunAgainst).
	Health string
	// Metrics is the base URL of the plain-HTTP metrics endpoint.
	Metrics string
	// Webhook is the host:port of the webhook server.
	Webhook string

	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	// set before exited is closed
	err      error
	exitedAt time.Time
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

// Start runs bin with args and env added to this process's environment. It
// is killed in t.Cleanup when still running, and its output is printed when
// the test failed.
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start operator: %v", err)
	}
	go func() {
		err := p.cmd.Wait()
		p.err, p.exitedAt = err, time.Now()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		// The race detector reports as it finds and only sets the exit code
		// at exit, so the output is checked even for a killed process.
		if races := raceReports(p.Output()); races != "" {
			t.Errorf("operator (pid %d) has a data race:\n%s", p.Pid(), races)
		}
		if t.Failed() {
			t.Logf("operator (pid %d) output:\n%s", p.Pid(), p.Output())
		}
	})
	return p
}

// Output is everything the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.out.String() }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal operator (pid %d): %w", p.Pid(), err)
	}
	return nil
}

// Kill sends SIGKILL: no shutdown hooks run, nothing is released.
func (p *Process) Kill() error { return p.Signal(syscall.SIGKILL) }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitedAt is when the exit was noticed; zero while running.
func (p *Process) ExitedAt() time.Time {
	select {
	case <-p.exited:
		return p.exitedAt
	default:
		return time.Time{}
	}
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Wait returns the exit code, -1 when a signal ended the process; it fails
// the test when the process is still running after timeout.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Fatalf("operator (pid %d) still running after %s", p.Pid(), timeout)
	}
	if p.err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	t.Fatalf("operator (pid %d): %v", p.Pid(), p.err)
	return -1
}

// RunAgainst starts the operator against cp with free ports, a serving
// certificate signed by cp's CA and plain-HTTP metrics; extra flags come
// last and so override these. It returns once /readyz answers 200.
func RunAgainst(t testing.TB, bin string, cp *controlplane.ControlPlane, extra ...string) *Process {
	t.Helper()
	p := StartAgainst(t, bin, cp, extra...)
	p.WaitReady(t, ReadyTimeout)
	return p
}

// StartAgainst is RunAgainst without waiting for readiness.
func StartAgainst(t testing.TB, bin string, cp *controlplane.ControlPlane, extra ...string) *Process {
	t.Helper()
	ports := FreePorts(t, 3)
	certDir := t.TempDir()
	if _, err := cp.IssueServingCert(certDir); err != nil {
		t.Fatalf("issue serving certificate: %v", err)
	}
	args := append([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--webhook-port=" + strconv.Itoa(ports[0]),
		"--webhook-cert-dir=" + certDir,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
	}, extra...)
	p := Start(t, bin, nil, args...)
	p.Webhook = "127.0.0.1:" + strconv.Itoa(ports[0])
	p.Metrics = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	p.Health = "http://127.0.0.1:" + strconv.Itoa(ports[2])
	return p
}

// WaitReady waits until /readyz answers 200, failing the test when the
// process exits first or timeout passes.
func (p *Process) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for HTTPStatus(p.Health+"/readyz") != http.StatusOK {
		select {
		case <-p.exited:
			t.Fatalf("operator (pid %d) exited before it was ready: %v", p.Pid(), p.err)
		case <-deadline.C:
			t.Fatalf("operator (pid %d) not ready after %s", p.Pid(), timeout)
		case <-tick.C:
		}
	}
}

// HTTPStatus GETs url and returns the status code, 0 when unreachable.
func HTTPStatus(url string) int {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// FreePorts asks the kernel for n distinct unused TCP ports on 127.0.0.1.
// They are released before the operator binds them.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		defer func() { _ = l.Close() }()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out
}

// Sample is one series of a scrape.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples is a scrape of /metrics.
type Samples []Sample

// Sum adds up the samples called name whose labels include labels.
func (s Samples) Sum(name string, labels map[string]string) float64 {
	var sum float64
next:
	for _, m := range s {
		if m.Name != name {
			continue
		}
		for k, v := range labels {
			if m.Labels[k] != v {
				continue next
			}
		}
		sum += m.Value
	}
	return sum
}

// Scrape reads the process's /metrics in the Prometheus text format; with
// names, only the series of those metrics are kept (and parsed).
func (p *Process) Scrape(names ...string) (Samples, error) {
	resp, err := httpClient.Get(p.Metrics + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scrape operator (pid %d): %w", p.Pid(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape operator (pid %d): status %d", p.Pid(), resp.StatusCode)
	}
	return ParseMetrics(resp.Body, names...)
}

// ParseMetrics reads samples in the Prometheus text exposition format;
// comments and histogram or summary bookkeeping lines come out like any
// other series (name_bucket, name_sum, name_count). With names, only the
// series called so are kept.
func ParseMetrics(r io.Reader, names ...string) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || !wanted(line, names) {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	return out, nil
}

// wanted reports whether line is a series of one of names (all when none).
func wanted(line string, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(line, n); ok && (strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, " ")) {
			return true
		}
	}
	return false
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	rest := line
	i := strings.IndexAny(rest, "{ ")
	if i < 0 {
		return s, fmt.Errorf("parse metrics line %q: no value", line)
	}
	s.Name, rest = rest[:i], rest[i:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, "=\"")
			if eq < 0 {
				return s, fmt.Errorf("parse metrics line %q: bad labels", line)
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			closed := false
			for i := 0; i < len(rest); i++ {
				c := rest[i]
				if c == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[i])
					}
					continue
				}
				if c == '"' {
					rest, closed = rest[i+1:], true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return s, fmt.Errorf("parse metrics line %q: unterminated label value", line)
			}
			s.Labels[key] = val.String()
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return s, fmt.Errorf("parse metrics line %q: no value", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("parse metrics line %q: %w", line, err)
	}
	s.Value = v
	return s, nil
}
