package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The teardown check itself: what a cluster could leave — a process naming
// its folder, a mount, a network namespace, an interface, an iptables chain
// with a jump to it, a kubepods cgroup — is seen, and sweep removes it.
func TestTeardownCheckSeesEveryKindOfLeftover(t *testing.T) {
	if os.Getenv(GateEnv) == "" {
		t.Skipf("node tier: set %s=1 or run `make test-node` (needs root)", GateEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatal("node tier: needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	before := readHost(ctx)

	const netns, link, chain = "hxo-leftover-test", "hxoleft0", "KUBE-LEFTOVER-TEST"
	cgroup := "/sys/fs/cgroup/pids/kubepods-leftover-test"
	mnt := filepath.Join(dir, "mnt")
	t.Cleanup(func() { // should the sweep fail
		_, _ = run(context.Background(), "ip", "netns", "delete", netns)
		_, _ = run(context.Background(), "ip", "link", "delete", link)
		_, _ = run(context.Background(), "iptables", "-D", "INPUT", "-j", chain)
		_, _ = run(context.Background(), "iptables", "-X", chain)
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		_ = syscall.Rmdir(cgroup)
	})
	for _, args := range [][]string{
		{"ip", "netns", "add", netns},
		{"ip", "link", "add", link, "type", "bridge"},
		{"iptables", "-N", chain},
		{"iptables", "-A", "INPUT", "-j", chain, "-m", "comment", "--comment", "left by a test"},
	} {
		if _, err := run(ctx, args[0], args[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(cgroup, 0o755); err != nil {
		t.Fatal(err)
	}
	// A process whose command line names the cluster's folder.
	sleeper := &exec.Cmd{Path: "/bin/sleep", Args: []string{filepath.Join(dir, "sleeper"), "300"}}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = sleeper.Wait(); close(exited) }()

	left := diffHost(before, readHost(ctx), []string{dir})
	if _, ok := left.pids[sleeper.Process.Pid]; !ok {
		t.Errorf("process %d not seen: %s", sleeper.Process.Pid, left)
	}
	for _, want := range []struct {
		kind, item string
		in         []string
	}{
		{"mount", mnt, left.mounts},
		{"network namespace", netns, left.netns},
		{"interface", link, left.links},
		{"chain", "iptables filter " + chain, left.chains},
		{"cgroup", cgroup, left.cgroups},
	} {
		if !slices.Contains(want.in, want.item) {
			t.Errorf("%s %s not seen: %s", want.kind, want.item, left)
		}
	}
	if !strings.Contains(left.String(), netns) {
		t.Errorf("the report does not name %s: %s", netns, left)
	}

	if err := sweep(ctx, left); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("sweep did not kill the process")
	}
	if again := diffHost(before, readHost(ctx), []string{dir}); !again.empty() {
		t.Fatalf("after sweep: %s", again)
	}
}
