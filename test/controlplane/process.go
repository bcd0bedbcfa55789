package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one component of a test cluster: its command, its log file
// and a channel closed when it has exited. The node tier runs its
// components with it too.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	exited  chan struct{}
	waitErr error
	killed  bool // stop needed SIGKILL
}

// process is the control plane's own name for it.
type process = Process

// StartProcess runs bin with args in dir, in its own process group, sending
// stdout and stderr to <dir>/<name>.log; it is killed with the test binary
// should that die first.
func StartProcess(name, bin, dir string, args ...string) (*Process, error) {
	return startProcess(name, bin, dir, args)
}

// startProcess is StartProcess with its arguments in a slice.
func startProcess(name, bin, dir string, args []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = dir
	// Own process group, and killed with the test binary should it die
	// without running its cleanups (a timeout panic, a SIGKILL).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process id, for tests that check nothing is left running.
func (p *process) Pid() int { return p.cmd.Process.Pid }

// running reports whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
// kube-apiserver drains slowly on TERM, so grace bounds the wait.
func (p *process) stop(grace time.Duration) error {
	defer func() { _ = p.logFile.Close() }()
	if !p.running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	// Kill the whole group: some components fork helpers.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.killed = true
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.Pid())
	}
}

// Name is the component's name, as its log file is named.
func (p *Process) Name() string { return p.name }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool { return p.running() }

// Stop sends SIGTERM, then SIGKILL to the group after grace, and waits for
// the exit; Killed then says whether SIGKILL was needed.
func (p *Process) Stop(grace time.Duration) error { return p.stop(grace) }

// Killed reports whether Stop had to send SIGKILL.
func (p *Process) Killed() bool { return p.killed }

// Tail returns at most the last n lines of the process's log.
func (p *Process) Tail(n int) string { return p.tail(n) }

// ExitStatus says how the process exited: its wait error, or exit status 0.
func (p *Process) ExitStatus() string {
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exit status 0"
}

// tail returns at most the last n lines of the process's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// exitError describes why a process exited before it was ready.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited early (%v); last lines of its log:\n%s", p.name, p.waitErr, p.tail(30)) //nolint:errorlint // nil after exit status 0, which %v prints as <nil> and %w garbles
}

// freePorts asks the kernel for n distinct unused TCP ports on 127.0.0.1.
// They are released before the components bind them, so a parallel test may
// grab one first; Start retries in that case.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// StablePort picks a free port on 127.0.0.1 below the kernel's ephemeral
// range, for a server started later (an operator's webhook server),
// perhaps more than once, so it must stay free in between: a port from the
// ephemeral range could meanwhile become the source port of some outgoing
// connection (or another test's ":0" listener), and the server would fail
// to bind.
func StablePort() (int, error) {
	lo, hi := 20000, 32000
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if first, err := strconv.Atoi(f[0]); err == nil && first-1 < hi {
				hi = first - 1
			}
		}
	}
	for range 100 {
		if hi <= lo {
			break
		}
		port := lo + rand.N(hi-lo)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			_ = l.Close()
			return port, nil
		}
	}
	// No room below the ephemeral range: take any free port and accept the
	// small risk described above.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port for the webhook server: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errNotReady is returned when a component did not become ready in time.
var errNotReady = errors.New("not ready")
