package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// hostState is what the node's parts change on the host, read before the
// cluster starts and again after it stopped: anything new afterwards is a
// leftover.
type hostState struct {
	pids    map[int]bool
	mounts  map[string]bool
	netns   map[string]bool
	links   map[string]bool
	chains  map[string]bool // "iptables nat KUBE-SERVICES"
	cgroups map[string]bool // the kubelet's QoS roots under every hierarchy
	sysctls map[string]string
}

// sysctls the kubelet (protectKernelDefaults off), kube-proxy and the CNI
// bridge plugin may set; Stop writes the values read before back.
var sysctls = []string{
	"net/ipv4/ip_forward",
	"net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
	"net/netfilter/nf_conntrack_max",
	"net/netfilter/nf_conntrack_tcp_timeout_established",
	"net/netfilter/nf_conntrack_tcp_timeout_close_wait",
}

func readHost(ctx context.Context) hostState {
	s := hostState{
		pids: map[int]bool{}, mounts: map[string]bool{}, netns: map[string]bool{}, links: map[string]bool{},
		chains: map[string]bool{}, cgroups: map[string]bool{}, sysctls: map[string]string{},
	}
	for _, pid := range pids() {
		s.pids[pid] = true
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 4 {
				s.mounts[fields[4]] = true
			}
		}
		_ = f.Close()
	}
	if entries, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range entries {
			s.netns[e.Name()] = true
		}
	}
	if entries, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range entries {
			s.links[e.Name()] = true
		}
	}
	for _, tool := range []string{"iptables", "ip6tables"} {
		out, err := run(ctx, tool+"-save")
		if err != nil {
			continue
		}
		table := ""
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(line, "*"):
				table = line[1:]
			case strings.HasPrefix(line, ":"):
				// Built-in chains appear with their table and stay.
				if name := strings.Fields(line[1:])[0]; !builtinChains[name] {
					s.chains[tool+" "+table+" "+name] = true
				}
			}
		}
	}
	for _, dir := range cgroupQoSRoots() {
		s.cgroups[dir] = true
	}
	for _, key := range sysctls {
		if data, err := os.ReadFile(filepath.Join("/proc/sys", key)); err == nil {
			s.sysctls[key] = strings.TrimSpace(string(data))
		}
	}
	return s
}

// mountsUnder lists the mount points below dir.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

var builtinChains = map[string]bool{"INPUT": true, "OUTPUT": true, "FORWARD": true, "PREROUTING": true, "POSTROUTING": true}

// newChains lists the chains in after and not in before whose name starts
// with prefix.
func newChains(before, after hostState, prefix string) []string {
	var out []string
	for c := range after.chains {
		if !before.chains[c] && strings.HasPrefix(c[strings.LastIndexByte(c, ' ')+1:], prefix) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// isMountPoint reports whether path is a mount point now.
func isMountPoint(path string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}

// cgroupQoSRoots are the kubelet's kubepods folders present now.
func cgroupQoSRoots() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods*")
	more, _ := filepath.Glob("/sys/fs/cgroup/kubepods*")
	return append(dirs, more...)
}

func pids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// leftovers compares now with before and lists what the cluster left,
// sorted: processes, mounts, network namespaces, interfaces, iptables
// chains, cgroups.
type leftovers struct {
	pids    map[int]string
	mounts  []string
	netns   []string
	links   []string
	chains  []string
	cgroups []string
}

func (l leftovers) empty() bool {
	return len(l.pids)+len(l.mounts)+len(l.netns)+len(l.links)+len(l.chains)+len(l.cgroups) == 0
}

func (l leftovers) String() string {
	var b strings.Builder
	if len(l.pids) > 0 {
		var ps []string
		for pid, cmd := range l.pids {
			ps = append(ps, fmt.Sprintf("%d %s", pid, cmd))
		}
		sort.Strings(ps)
		fmt.Fprintf(&b, "processes: %s; ", strings.Join(ps, ", "))
	}
	for _, part := range []struct {
		name  string
		items []string
	}{{"mounts", l.mounts}, {"network namespaces", l.netns}, {"interfaces", l.links}, {"iptables chains", l.chains}, {"cgroups", l.cgroups}} {
		if len(part.items) > 0 {
			fmt.Fprintf(&b, "%s: %s; ", part.name, strings.Join(part.items, ", "))
		}
	}
	return strings.TrimSuffix(b.String(), "; ")
}

func diffHost(before, after hostState, dirs []string) leftovers {
	var l leftovers
	l.pids = map[int]string{}
	for pid := range after.pids {
		if before.pids[pid] {
			continue
		}
		if cmd, ours := clusterProcess(pid, dirs); ours {
			l.pids[pid] = cmd
		}
	}
	for m := range after.mounts {
		if !before.mounts[m] {
			l.mounts = append(l.mounts, m)
		}
	}
	for n := range after.netns {
		if !before.netns[n] {
			l.netns = append(l.netns, n)
		}
	}
	for n := range after.links {
		if !before.links[n] {
			l.links = append(l.links, n)
		}
	}
	for c := range after.chains {
		if !before.chains[c] {
			l.chains = append(l.chains, c)
		}
	}
	for c := range after.cgroups {
		if !before.cgroups[c] {
			l.cgroups = append(l.cgroups, c)
		}
	}
	for _, s := range [][]string{l.mounts, l.netns, l.links, l.chains, l.cgroups} {
		sort.Strings(s)
	}
	return l
}

// clusterProcess reports whether pid is one of the cluster's processes,
// and its command line: a process in a kubepods cgroup (a container) or
// whose command line names one of the cluster's folders (the components,
// containerd's shims). Other tests may run on the same machine; their
// processes are not the cluster's.
func clusterProcess(pid int, dirs []string) (string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(raw) == 0 {
		return "", false // gone, or a kernel thread
	}
	cmd := strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
	cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	ours := strings.Contains(string(cgroup), "kubepods")
	for _, dir := range dirs {
		ours = ours || strings.Contains(cmd, dir)
	}
	if len(cmd) > 120 {
		cmd = cmd[:120] + "…"
	}
	return cmd, ours
}

// sweep removes every leftover: kills processes, unmounts (deepest
// first), deletes network namespaces, interfaces and chains, removes
// cgroups (deepest first). It returns what it could not remove.
func sweep(ctx context.Context, l leftovers) error {
	var errs []error
	for pid := range l.pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	mounts := append([]string(nil), l.mounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	for _, n := range l.netns {
		if _, err := run(ctx, "ip", "netns", "delete", n); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range l.links {
		if _, err := os.Stat("/sys/class/net/" + n); err != nil {
			continue // a veth goes with its peer
		}
		if _, err := run(ctx, "ip", "link", "delete", n); err != nil {
			errs = append(errs, err)
		}
	}
	if err := deleteChains(ctx, l.chains); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroups(l.cgroups); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteChains removes the jumps to the given chains ("tool table chain"),
// then flushes and deletes them.
func deleteChains(ctx context.Context, chains []string) error {
	if len(chains) == 0 {
		return nil
	}
	type key struct{ tool, table string }
	byTable := map[key]map[string]bool{}
	for _, c := range chains {
		f := strings.Fields(c)
		k := key{f[0], f[1]}
		if byTable[k] == nil {
			byTable[k] = map[string]bool{}
		}
		byTable[k][f[2]] = true
	}
	var errs []error
	for k, names := range byTable {
		out, err := run(ctx, k.tool+"-save", "-t", k.table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Rules in the other chains that jump to ours.
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "-A" || names[f[1]] {
				continue
			}
			for i, w := range f {
				if (w == "-j" || w == "-g") && i+1 < len(f) && names[f[i+1]] {
					args := append([]string{"-t", k.table, "-D"}, f[1:]...)
					if _, err := run(ctx, k.tool, unquote(args)...); err != nil {
						errs = append(errs, err)
					}
					break
				}
			}
		}
		for name := range names {
			_, _ = run(ctx, k.tool, "-t", k.table, "-F", name)
		}
		for name := range names {
			if _, err := run(ctx, k.tool, "-t", k.table, "-X", name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// unquote drops the quotes iptables-save puts around comments; the words
// of a quoted comment stay one argument.
func unquote(words []string) []string {
	var out []string
	var quoted []string
	for _, w := range words {
		switch {
		case quoted != nil:
			quoted = append(quoted, w)
			if strings.HasSuffix(w, `"`) {
				out = append(out, strings.Trim(strings.Join(quoted, " "), `"`))
				quoted = nil
			}
		case strings.HasPrefix(w, `"`) && !(len(w) > 1 && strings.HasSuffix(w, `"`)):
			quoted = []string{w}
		default:
			out = append(out, strings.Trim(w, `"`))
		}
	}
	return out
}

// removeCgroups removes cgroup folders, children first.
func removeCgroups(roots []string) error {
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// writeSysctls records the values read before the cluster started, one
// "key value" a line (key as under /proc/sys).
func writeSysctls(path string, before hostState) error {
	keys := make([]string, 0, len(before.sysctls))
	for k := range before.sysctls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k, before.sysctls[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// restoreSysctls writes back the values read before the cluster started.
func restoreSysctls(before hostState) error {
	var errs []error
	for key, value := range before.sysctls {
		path := filepath.Join("/proc/sys", key)
		data, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(data)) == value {
			continue
		}
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}
