package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// Built once by TestMain: the localcluster program, and a bin folder with
// an operator built from this tree next to links to the control plane
// binaries (bin/ itself is left alone).
var (
	localclusterBin string
	binDir          string
)

// controlPlaneBinaries are what `make tools` puts into bin/.
var controlPlaneBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "localcluster-test-")
	if err == nil {
		err = build(dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster test setup: %v\n", err)
		os.Exit(1)
	}
	code := controlplane.WithoutChildren(m.Run())
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func build(dir string) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	localclusterBin = filepath.Join(dir, "localcluster")
	binDir = filepath.Join(dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", localclusterBin, "./test/localcluster")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./test/localcluster: %w", err)
	}
	// Race-instrumented when these tests run with the race detector, as
	// every tier's operator is; TestMakeRun reads the operator's log for
	// race reports.
	if _, err := operatorproc.Build(root, binDir); err != nil {
		return err
	}
	for _, name := range controlPlaneBinaries {
		path, err := controlplane.Binary(name)
		if err != nil {
			return err
		}
		if err := os.Symlink(path, filepath.Join(binDir, name)); err != nil {
			return err
		}
	}
	return nil
}

// `make run` end to end: the program starts the control plane and the
// operator, the samples of config/samples/ applied with the kubectl command
// it prints do what the README says, and Ctrl-C (SIGINT to its process
// group, as a terminal sends it) stops everything it started and exits 0.
func TestMakeRun(t *testing.T) {
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	state := t.TempDir()
	lc := startLocalcluster(t, root, state)

	began := time.Now()
	select {
	case <-lc.ready:
	case <-lc.exited:
		t.Fatalf("localcluster exited before it was ready (%v)\nstdout:\n%s\nstderr:\n%s", lc.err, lc.stdout.String(), lc.stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("localcluster not ready after 3m\nstdout:\n%s\nstderr:\n%s", lc.stdout.String(), lc.stderr.String())
	}
	t.Logf("ready %s after start", time.Since(began).Round(100*time.Millisecond))

	started := descendants(lc.cmd.Process.Pid)
	names := make([]string, 0, len(started))
	for _, p := range started {
		names = append(names, p.name)
	}
	for _, want := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "operator"} {
		require.Contains(t, names, want, "localcluster runs %s", want)
	}

	m := regexp.MustCompile(`--kubeconfig (\S+)`).FindStringSubmatch(lc.stdout.String())
	require.NotNil(t, m, "the printed instructions name a kubeconfig")
	kubeconfig := m[1]
	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "kubectl %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	t.Logf("$ kubectl apply -k config/samples/\n%s", kubectl("apply", "-k", "config/samples/"))

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		rs, err := cs.AppsV1().ReplicaSets("default").Get(ctx, "replicaset-sample", metav1.GetOptions{})
		return err == nil && rs.Labels["hello"] == "world"
	}, time.Minute, 200*time.Millisecond, "the sample ReplicaSet labeled hello=world")
	for _, name := range []string{"chaospod-v1-sample", "chaospod-v2-sample"} {
		require.Eventually(t, func() bool {
			pod, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			owner := metav1.GetControllerOf(pod)
			return owner != nil && owner.Kind == "ChaosPod" && owner.Name == name &&
				pod.Annotations["example-mutating-admission-webhook"] == "foo"
		}, time.Minute, 200*time.Millisecond, "the Pod of ChaosPod %s, admitted by the Pod webhooks", name)
	}
	require.Eventually(t, func() bool {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=replicaset-sample"})
		return err == nil && len(pods.Items) == 2 && !slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool {
			return p.Annotations["example-mutating-admission-webhook"] != "foo"
		})
	}, time.Minute, 200*time.Millisecond, "the sample ReplicaSet's two Pods, admitted by the Pod webhooks")
	t.Logf("$ kubectl get replicasets --show-labels\n%s", kubectl("get", "replicasets", "--show-labels"))
	t.Logf("$ kubectl get chaospods,pods\n%s", kubectl("get", "chaospods,pods"))

	// Ctrl-C: the terminal signals the foreground process group, which
	// holds localcluster and the operator (the control plane components
	// have groups of their own and are stopped by localcluster).
	stopping := time.Now()
	require.NoError(t, syscall.Kill(-lc.cmd.Process.Pid, syscall.SIGINT))
	select {
	case <-lc.exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("localcluster still running 90s after SIGINT\nstdout:\n%s", lc.stdout.String())
	}
	t.Logf("stopped %s after SIGINT", time.Since(stopping).Round(100*time.Millisecond))
	assert.NoError(t, lc.err, "exit 0 after SIGINT; stderr:\n%s", lc.stderr.String())
	assert.Empty(t, lc.stderr.String())
	assert.Empty(t, alive(started), "processes localcluster started, still running after it exited")
	t.Logf("make run transcript (stdout):\n%s", lc.stdout.String())
	operatorLog, err := os.ReadFile(filepath.Join(state, "operator.log"))
	require.NoError(t, err)
	assert.NotContains(t, string(operatorLog), "WARNING: DATA RACE", "the operator's log holds a race report")
}

// localcluster is the running program.
type localcluster struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	ready          chan struct{} // closed when readyLine was printed
	exited         chan struct{} // closed when it has exited; err is set then
	err            error
}

func startLocalcluster(t *testing.T, root, state string) *localcluster {
	t.Helper()
	lc := &localcluster{stdout: &syncBuffer{}, stderr: &syncBuffer{}, ready: make(chan struct{}), exited: make(chan struct{})}
	lc.cmd = exec.Command(localclusterBin, "--bin", binDir, "--state", state)
	lc.cmd.Dir = root
	lc.cmd.Env = append(os.Environ(), controlplane.AssetsEnv+"="+binDir)
	lc.cmd.Stderr = lc.stderr
	// A process group of its own, like a shell job, so SIGINT can go to
	// the group; killed with the test binary should it die.
	lc.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := lc.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, lc.cmd.Start())
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		var once sync.Once
		s := bufio.NewScanner(out)
		for s.Scan() {
			_, _ = lc.stdout.Write(append(s.Bytes(), '\n'))
			if strings.TrimSpace(s.Text()) == readyLine {
				once.Do(func() { close(lc.ready) })
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it all first
		lc.err = lc.cmd.Wait()
		close(lc.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-lc.exited:
			return
		default:
		}
		// The test failed before stopping it: leave nothing behind. The
		// control plane components die with it (parent-death signal).
		left := descendants(lc.cmd.Process.Pid)
		_ = syscall.Kill(-lc.cmd.Process.Pid, syscall.SIGKILL)
		<-lc.exited
		for _, p := range alive(left) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		t.Logf("localcluster stdout:\n%s\nstderr:\n%s", lc.stdout.String(), lc.stderr.String())
	})
	return lc
}

// proc identifies a process across pid reuse: pid plus start time.
type proc struct {
	pid   int
	start string // field 22 of /proc/<pid>/stat, in clock ticks since boot
	name  string // base name of argv[0]
}

func (p proc) String() string { return p.name + "(" + strconv.Itoa(p.pid) + ")" }

// stat reads pid's parent, state and start time from /proc.
func stat(pid int) (ppid int, state, start string, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", "", false
	}
	// pid (comm) state ppid ... ; comm may hold spaces and parentheses.
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, "", "", false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return 0, "", "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], f[19], err == nil
}

// descendants lists the live processes below root.
func descendants(root int) []proc {
	byParent := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, _, ok := stat(pid); ok && state != "Z" {
			byParent[ppid] = append(byParent[ppid], pid)
		}
	}
	var out []proc
	queue := slices.Clone(byParent[root])
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], byParent[pid]...)
		_, _, start, ok := stat(pid)
		if !ok {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		out = append(out, proc{pid: pid, start: start, name: filepath.Base(string(argv0))})
	}
	return out
}

// alive returns those of ps still running (not exited, not a zombie, not
// a new process that reused the pid).
func alive(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if _, state, start, ok := stat(p.pid); ok && state != "Z" && start == p.start {
			out = append(out, p)
		}
	}
	return out
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
