package main

import (
	"bufio"
	"bytes"
	"context"
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
	"syscall"
	"time"
)

// operatorStopGrace is how long a stopping operator gets after SIGTERM: a
// little more than its default --shutdown-timeout.
const operatorStopGrace = 35 * time.Second

// operatorReadyTimeout bounds the wait for /readyz; with thousands of
// objects to list on a busy 2-core machine a start can be slow.
const operatorReadyTimeout = 2 * time.Minute

// operator is one running operator process.
type operator struct {
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	exited  chan struct{}
	waitErr error
	// started is taken right before the process is started: the zero of
	// every "from process start" figure.
	started time.Time
	health  string // base URL of /readyz
	metrics string // base URL of plain-HTTP /metrics
	pprof   string // host:port of /debug/pprof/, for heap profiles
}

// startOperator runs bin against the control plane with the operator's
// documented flags, on the shared webhook address, free metrics, health
// and profiling ports, and the given --controllers. It returns once the process runs; see
// waitReady.
func (e *env) startOperator(bin, name, controllers string) (*operator, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	_, webhookPort, _ := net.SplitHostPort(e.webhook)
	args := []string{
		"--kubeconfig=" + e.cp.KubeconfigPath,
		"--webhook-port=" + webhookPort,
		"--webhook-cert-dir=" + e.certDir,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[0]),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--pprof-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
	}
	if controllers != "" {
		args = append(args, "--controllers="+controllers)
	}
	*e.seq++
	logPath := filepath.Join(e.dir, fmt.Sprintf("operator-%s-%d.log", name, *e.seq))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create operator log: %w", err)
	}
	op := &operator{
		cmd:     exec.Command(bin, args...),
		logPath: logPath,
		logFile: logFile,
		exited:  make(chan struct{}),
		metrics: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		health:  "http://127.0.0.1:" + strconv.Itoa(ports[1]),
		pprof:   "127.0.0.1:" + strconv.Itoa(ports[2]),
	}
	op.cmd.Env = binaryEnv(os.Environ(), e.opts.memProfileRate)
	op.cmd.Stdout, op.cmd.Stderr = logFile, logFile
	// Own process group, so a Ctrl-C reaches only the driver, which then
	// stops the operator in order; killed should the driver die abruptly.
	op.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	op.started = time.Now()
	if err := op.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start operator %s: %w", bin, err)
	}
	go func() {
		op.waitErr = op.cmd.Wait()
		close(op.exited)
	}()
	return op, nil
}

// binaryEnv is environ for a binary measured, with its
// runtime.MemProfileRate set to rate through GODEBUG (after any GODEBUG
// settings already there) unless rate is 0.
func binaryEnv(environ []string, rate int) []string {
	if rate == 0 {
		return environ
	}
	setting := "memprofilerate=" + strconv.Itoa(rate)
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			if v != "" {
				setting = v + "," + setting
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GODEBUG="+setting)
}

// waitReady polls /readyz (caches synced, webhooks serving) until it answers
// 200 and returns the time since process start. Polling a hundred times a
// second keeps the figure's resolution well under the start-up time.
func (op *operator) waitReady(ctx context.Context) (time.Duration, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.After(operatorReadyTimeout)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, op.health+"/readyz", nil)
		if err != nil {
			return 0, err
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(op.started), nil
			}
		}
		select {
		case <-op.exited:
			return 0, op.exitedError()
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline:
			return 0, fmt.Errorf("operator not ready after %s; last lines of %s:\n%s", operatorReadyTimeout, op.logPath, op.tail(20))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// alive fails when the operator has exited, so a workload waiting on the
// API server does not wait out its timeout for a dead process.
func (op *operator) alive() error {
	select {
	case <-op.exited:
		return op.exitedError()
	default:
		return nil
	}
}

func (op *operator) exitedError() error {
	return fmt.Errorf("operator exited (%v); last lines of %s:\n%s", op.waitErr, op.logPath, op.tail(20)) //nolint:errorlint // nil after exit status 0, which %v prints as <nil> and %w garbles
}

// stop sends SIGTERM and waits for the exit; SIGKILL after operatorStopGrace.
// A non-zero exit on SIGTERM breaks the documented stop and is reported.
func (op *operator) stop() error {
	defer func() { _ = op.logFile.Close() }()
	select {
	case <-op.exited:
		return op.exitedError()
	default:
	}
	_ = op.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-op.exited:
		if op.waitErr != nil {
			return fmt.Errorf("operator stopped with %w; last lines of %s:\n%s", op.waitErr, op.logPath, op.tail(20))
		}
		return nil
	case <-time.After(operatorStopGrace):
	}
	_ = syscall.Kill(-op.cmd.Process.Pid, syscall.SIGKILL)
	<-op.exited
	return fmt.Errorf("operator did not stop within %s of SIGTERM; killed", operatorStopGrace)
}

// residentSet is a process's resident memory: total (VmRSS), and its
// anonymous pages (RssAnon: heap, stacks, the runtime's own) and those
// mapped from files (RssFile: the binary's code and data read in).
type residentSet struct{ total, anon, file int64 }

// rss reads the operator process's resident set from /proc/<pid>/status.
func (op *operator) rss() (residentSet, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", op.cmd.Process.Pid))
	if err != nil {
		return residentSet{}, fmt.Errorf("read operator memory: %w", err)
	}
	defer func() { _ = f.Close() }()
	rs, err := parseResidentSet(f)
	if err != nil {
		return residentSet{}, fmt.Errorf("read operator memory: %w", err)
	}
	return rs, nil
}

// parseResidentSet reads VmRSS, RssAnon and RssFile (in kB) from a
// /proc/<pid>/status; each must be there.
func parseResidentSet(r io.Reader) (residentSet, error) {
	var rs residentSet
	fields := map[string]*int64{"VmRSS": &rs.total, "RssAnon": &rs.anon, "RssFile": &rs.file}
	seen := 0
	s := bufio.NewScanner(r)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), ":")
		dst, want := fields[name]
		if !ok || !want {
			continue
		}
		parts := strings.Fields(rest)
		if len(parts) != 2 || parts[1] != "kB" {
			return residentSet{}, fmt.Errorf("unexpected %s line %q", name, s.Text())
		}
		kb, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil {
			return residentSet{}, fmt.Errorf("%s: %w", name, err)
		}
		*dst = kb << 10
		seen++
	}
	if err := s.Err(); err != nil {
		return residentSet{}, err
	}
	if seen != len(fields) {
		return residentSet{}, errors.New("no VmRSS, RssAnon and RssFile in /proc/<pid>/status")
	}
	return rs, nil
}

// metric returns the value of an unlabeled metric from /metrics.
func (op *operator) metric(ctx context.Context, name string) (float64, error) {
	body, err := op.scrape(ctx)
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(body) {
		if rest, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			v, err := strconv.ParseFloat(string(bytes.TrimSpace(rest)), 64)
			if err != nil {
				return 0, fmt.Errorf("metric %s: %w", name, err)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("metric %s not exported", name)
}

// scrape returns the body of /metrics, in the text exposition format.
func (op *operator) scrape(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, op.metrics+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape operator metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape operator metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape operator metrics: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// binaryName names the binary bin measured under label (A, B, …; empty
// with one binary) in errors.
func binaryName(bin, label string) string {
	if label == "" {
		return bin
	}
	return label + " (" + bin + ")"
}

// tail returns at most the last n lines of the operator's log.
func (op *operator) tail(n int) string {
	data, err := os.ReadFile(op.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", op.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePorts asks the kernel for n distinct unused ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer func() { _ = l.Close() }()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
