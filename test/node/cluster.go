package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// The node's network: a bridge the test creates, whose address is the
// node's, and the Pods' addresses behind it. The Service range is the
// control plane's.
const (
	NodeName   = "node-1"
	Bridge     = "hxonode0"
	NodeIP     = "10.244.0.1"
	PodCIDR    = "10.244.0.0/24"
	serviceIP  = "10.0.0.1" // the kubernetes Service
	PauseImage = "registry.k8s.io/pause:3.10"
)

// Cluster is a control plane with one real node: containerd, kubelet,
// kube-proxy, kube-scheduler and the controllers Deployments need.
type Cluster struct {
	CP *controlplane.ControlPlane
	// Dir holds the node's state: containerd's root, the kubelet's root,
	// configurations and logs.
	Dir string
	// Bin is the folder of the project's binaries (bin/).
	Bin string

	before   hostState
	procs    []*proc // in start order
	forward  net.Listener
	fwdMu    sync.Mutex
	fwdConns map[net.Conn]bool // open forwarded connections; nil once stopped
	fwdWG    sync.WaitGroup
	stopOnce sync.Once
	stopErr  error
	log      func(format string, args ...any)
}

// Prerequisites lists what the node tier needs and this machine lacks.
func Prerequisites(bin string) []string {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (the kubelet, containerd and network namespaces need it)")
	}
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip", "iptables", "iptables-save", "conntrack"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd+" (hack/node-setup.sh)")
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, "CNI plugin "+plugin+" in "+cniBinDir+" (hack/node-setup.sh)")
		}
	}
	for _, tool := range []string{"kubelet", "kube-proxy", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			missing = append(missing, filepath.Join(bin, tool)+" (test/tools/node/build.sh)")
		}
	}
	for _, tool := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			missing = append(missing, filepath.Join(bin, tool)+" (make tools)")
		}
	}
	return missing
}

const cniBinDir = "/usr/lib/cni"

// Start brings the cluster up and waits until the node is Ready. logf
// receives progress lines. On error everything started is torn down.
func Start(ctx context.Context, bin string, logf func(string, ...any)) (*Cluster, error) {
	if missing := Prerequisites(bin); len(missing) > 0 {
		return nil, fmt.Errorf("node prerequisites missing: %s", strings.Join(missing, "; "))
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		return nil, fmt.Errorf("interface %s exists: an earlier run was killed before its teardown (hack/node-cleanup.sh removes what it left)", Bridge)
	}
	c := &Cluster{Bin: bin, log: logf, before: readHost(ctx)}
	dir, err := os.MkdirTemp("", "node-")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	// For hack/node-cleanup.sh, should this run be killed before Stop.
	if err := writeSysctls(filepath.Join(dir, "sysctl.before"), c.before); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	began := time.Now()
	if err := c.startNetwork(ctx); err != nil {
		return err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		APIServerFlags: []string{
			// Pods get their ServiceAccount's token: the default list again.
			"--disable-admission-plugins=",
			"--enable-admission-plugins=NodeRestriction",
			"--authorization-mode=Node,RBAC",
		},
	})
	if err != nil {
		return err
	}
	c.CP = cp
	// For hack/node-cleanup.sh, should this run be killed before Stop.
	if err := os.WriteFile(filepath.Join(c.Dir, "controlplane-dir"), []byte(cp.Dir), 0o644); err != nil {
		return err
	}
	c.log("node: control plane ready at %s", cp.Config.Host)
	if err := c.forwardAPIServer(); err != nil {
		return err
	}
	if err := c.publishAPIServer(ctx); err != nil {
		return err
	}
	if err := c.startControllers(); err != nil {
		return err
	}
	if err := c.startContainerd(ctx); err != nil {
		return err
	}
	if err := c.importImage(ctx, "pause", c.pauseImage); err != nil {
		return err
	}
	if err := c.startKubelet(); err != nil {
		return err
	}
	if err := c.startKubeProxy(); err != nil {
		return err
	}
	if err := c.waitNodeReady(ctx); err != nil {
		return err
	}
	c.log("node: %s Ready %s after start", NodeName, time.Since(began).Round(100*time.Millisecond))
	return nil
}

// startNetwork creates the bridge with the node's address; the CNI bridge
// plugin attaches the Pods' veths to it.
func (c *Cluster) startNetwork(ctx context.Context) error {
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", NodeIP + "/24", "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if _, err := run(ctx, "ip", args...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(c.Dir, "cni", "net.d"), 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "node-tier",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`, Bridge, filepath.Join(c.Dir, "cni", "ipam"), PodCIDR, NodeIP)
	return os.WriteFile(filepath.Join(c.Dir, "cni", "net.d", "10-node-tier.conflist"), []byte(conf), 0o644)
}

// forwardAPIServer makes the API server, which listens on loopback only,
// reachable from the Pods at the node's address, port 443.
func (c *Cluster) forwardAPIServer() error {
	l, err := net.Listen("tcp", net.JoinHostPort(NodeIP, "443"))
	if err != nil {
		return fmt.Errorf("listen for the API server forwarder: %w", err)
	}
	c.forward = l
	c.fwdConns = map[net.Conn]bool{}
	target := strings.TrimPrefix(c.CP.Config.Host, "https://")
	track := func(conn net.Conn, open bool) bool {
		c.fwdMu.Lock()
		defer c.fwdMu.Unlock()
		if c.fwdConns == nil { // stopped
			return false
		}
		if open {
			c.fwdConns[conn] = true
		} else {
			delete(c.fwdConns, conn)
		}
		return true
	}
	c.fwdWG.Add(1)
	go func() {
		defer c.fwdWG.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return // closed by Stop
			}
			c.fwdWG.Add(1)
			go func() {
				defer c.fwdWG.Done()
				defer func() { _ = in.Close() }()
				out, err := net.DialTimeout("tcp", target, 5*time.Second)
				if err != nil {
					return
				}
				defer func() { _ = out.Close() }()
				if !track(in, true) || !track(out, true) {
					return
				}
				defer track(in, false)
				defer track(out, false)
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
				go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return nil
}

// stopForwarder closes the listener and every forwarded connection, and
// waits for their goroutines.
func (c *Cluster) stopForwarder() {
	if c.forward == nil {
		return
	}
	_ = c.forward.Close()
	c.fwdMu.Lock()
	for conn := range c.fwdConns {
		_ = conn.Close()
	}
	c.fwdConns = nil
	c.fwdMu.Unlock()
	c.fwdWG.Wait()
}

// publishAPIServer points the kubernetes Service at the forwarder: the
// control plane runs without an endpoint reconciler.
func (c *Cluster) publishAPIServer(ctx context.Context) error {
	cs := c.CP.Clientset()
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes", Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "node-tier"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{NodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](443), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	return poll(ctx, 30*time.Second, 200*time.Millisecond, "publish the kubernetes Service's endpoints", func(ctx context.Context) (bool, string, error) {
		if _, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
			return false, err.Error(), nil
		}
		_, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Create(ctx, slice, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// kubeconfig writes a kubeconfig for the admin credentials impersonating
// user (empty: the admin itself).
func (c *Cluster) kubeconfig(name, user string, groups ...string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["node-tier"] = &clientcmdapi.Cluster{Server: c.CP.Config.Host, CertificateAuthorityData: c.CP.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.CP.Config.CertData, ClientKeyData: c.CP.Config.KeyData,
		Impersonate: user, ImpersonateGroups: groups,
	}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "node-tier", AuthInfo: name}
	cfg.CurrentContext = name
	path := filepath.Join(c.Dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

func (c *Cluster) startProc(name string, args ...string) error {
	bin := name
	if _, err := os.Stat(filepath.Join(c.Bin, name)); err == nil {
		bin = filepath.Join(c.Bin, name)
	}
	p, err := startProc(name, bin, c.Dir, args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// startControllers runs kube-controller-manager with what Deployments,
// Services and ServiceAccounts need (and nodelifecycle, which lifts the
// not-ready taint the kubelet registers the node with), and kube-scheduler.
func (c *Cluster) startControllers() error {
	err := c.startProc("kube-controller-manager",
		"--kubeconfig="+c.CP.KubeconfigPath,
		"--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,endpointslice-controller,disruption-controller,pod-garbage-collector-controller,node-lifecycle-controller,root-ca-certificate-publisher-controller,clusterrole-aggregation-controller",
		"--service-account-private-key-file="+c.CP.ServiceAccountKeyPath,
		"--root-ca-file="+c.CP.CACertPath,
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
		"--v=0",
	)
	if err != nil {
		return err
	}
	return c.startProc("kube-scheduler",
		"--kubeconfig="+c.CP.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--v=0",
	)
}

func (c *Cluster) containerdSocket() string { return filepath.Join(c.Dir, "containerd.sock") }

// startContainerd runs containerd with its own root, state, socket and
// CNI configuration, and runc's state under the cluster's folder.
func (c *Cluster) startContainerd(ctx context.Context) error {
	d := filepath.Join(c.Dir, "containerd")
	conf := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  netns_mounts_under_state_dir = true
  # This machine's root lacks CAP_SYS_RESOURCE: a negative oom_score_adj
  # (the sandbox's -998) fails runc's init, so scores are held at
  # containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), c.containerdSocket(), c.containerdSocket()+".ttrpc",
		filepath.Join(d, "opt"), PauseImage, filepath.Join(d, "runc"), cniBinDir, filepath.Join(c.Dir, "cni", "net.d"))
	path := filepath.Join(c.Dir, "containerd.toml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	if err := c.startProc("containerd", "--config", path); err != nil {
		return err
	}
	return poll(ctx, 30*time.Second, 100*time.Millisecond, "containerd ready", func(ctx context.Context) (bool, string, error) {
		out, err := c.ctr(ctx, "version")
		return err == nil, out, nil
	})
}

// ctr runs containerd's client in the k8s.io namespace, the CRI's.
func (c *Cluster) ctr(ctx context.Context, args ...string) (string, error) {
	return run(ctx, "ctr", append([]string{"--address", c.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
}

// importImage writes an image with build and imports it into containerd.
func (c *Cluster) importImage(ctx context.Context, name string, build func(context.Context) (Image, error)) error {
	began := time.Now()
	img, err := build(ctx)
	if err != nil {
		return fmt.Errorf("build image %s: %w", name, err)
	}
	path := filepath.Join(c.Dir, name+".oci.tar")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteOCIArchive(f, img); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if _, err := c.ctr(ctx, "images", "import", path); err != nil {
		return fmt.Errorf("import image %s: %w", img.Ref, err)
	}
	c.log("node: image %s built and imported in %s", img.Ref, time.Since(began).Round(10*time.Millisecond))
	return nil
}

// ImportImage builds and imports an image, for the tests' own images.
func (c *Cluster) ImportImage(ctx context.Context, name string, build func(context.Context) (Image, error)) error {
	return c.importImage(ctx, name, build)
}

// pauseImage is the sandbox image: ./pause built static, run as 65535 like
// the upstream image.
func (c *Cluster) pauseImage(ctx context.Context) (Image, error) {
	bin, err := c.GoBuild(ctx, "./test/node/pause", "pause")
	if err != nil {
		return Image{}, err
	}
	layer, err := BinaryLayer(bin, "pause")
	if err != nil {
		return Image{}, err
	}
	return Image{Ref: PauseImage, Layers: [][]File{layer}, Config: ImageConfig{Entrypoint: []string{"/pause"}, User: "65535:65535"}}, nil
}

// GoBuild builds a main package of the repository (static) into the
// cluster's folder and returns the binary's path.
func (c *Cluster) GoBuild(ctx context.Context, pkg, name string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(c.Dir, "build", name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w: %s", pkg, err, b)
	}
	return out, nil
}

func (c *Cluster) startKubelet() error {
	port, err := freePort(NodeIP)
	if err != nil {
		return err
	}
	healthz, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	kubeconfig, err := c.kubeconfig("kubelet", "system:node:"+NodeName, "system:nodes", "system:authenticated")
	if err != nil {
		return err
	}
	resolv := filepath.Join(c.Dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		return err
	}
	conf := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://%s
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %s
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
resolvConf: %s
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 10s
shutdownGracePeriod: 0s
`, c.containerdSocket(), NodeIP, port, healthz, c.CP.CACertPath, resolv)
	path := filepath.Join(c.Dir, "kubelet.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	root := filepath.Join(c.Dir, "kubelet")
	return c.startProc("kubelet",
		"--config="+path,
		"--kubeconfig="+kubeconfig,
		"--root-dir="+root,
		"--cert-dir="+filepath.Join(root, "pki"),
		"--volume-plugin-dir="+filepath.Join(root, "volume-plugins"),
		"--hostname-override="+NodeName,
		"--node-ip="+NodeIP,
		"--v=1",
	)
}

func (c *Cluster) startKubeProxy() error {
	kubeconfig, err := c.kubeconfig("kube-proxy", "system:kube-proxy", "system:authenticated")
	if err != nil {
		return err
	}
	healthz, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	metrics, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	conf := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
mode: iptables
hostnameOverride: %s
clusterCIDR: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
nodePortAddresses: ["%s/32"]
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  syncPeriod: 10s
  minSyncPeriod: 0s
`, kubeconfig, NodeName, PodCIDR, NodeIP, healthz, metrics, NodeIP)
	path := filepath.Join(c.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	return c.startProc("kube-proxy", "--config="+path, "--v=0")
}

func (c *Cluster) waitNodeReady(ctx context.Context) error {
	cs := c.CP.Clientset()
	return poll(ctx, 2*time.Minute, 500*time.Millisecond, "node "+NodeName+" Ready", func(ctx context.Context) (bool, string, error) {
		for _, p := range c.procs {
			if !p.Running() {
				return false, "", fmt.Errorf("%s exited (%s):\n%s", p.Name(), p.ExitStatus(), p.Tail(40))
			}
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, cond.Reason + ": " + cond.Message, nil
			}
		}
		return false, "no Ready condition", nil
	})
}

// Clientset is an admin clientset.
func (c *Cluster) Clientset() kubernetes.Interface { return c.CP.Clientset() }

// Logs returns the last lines of every node component's log.
func (c *Cluster) Logs(lines int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p.Name(), p.Tail(lines))
	}
	if c.CP != nil {
		b.WriteString(c.CP.Logs(lines))
	}
	return b.String()
}

// Stop tears the cluster down in order — controllers first, so nothing
// recreates the Pods; then every Pod, which the kubelet stops with its
// sandbox and network; then the node's processes, kube-proxy's rules, the
// control plane, the bridge — and fails when anything is left on the host
// (what is left is then removed anyway).
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var errs []error
	stopNamed := func(names ...string) {
		for i := len(c.procs) - 1; i >= 0; i-- {
			for _, n := range names {
				if c.procs[i].Name() == n {
					if err := stopProc(c.procs[i], 15*time.Second); err != nil {
						errs = append(errs, err)
					}
				}
			}
		}
	}
	stopNamed("kube-controller-manager", "kube-scheduler")
	if c.CP != nil && c.running("kubelet") {
		if err := c.drain(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	stopNamed("kubelet")
	// The kubelet bind-mounts its root folder onto itself (to share mounts
	// with containers) and leaves that mount when it stops.
	for _, m := range append(mountsUnder(filepath.Join(c.Dir, "kubelet")), filepath.Join(c.Dir, "kubelet")) {
		if isMountPoint(m) {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			}
		}
	}
	if c.running("containerd") {
		if err := c.removeContainers(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	stopNamed("kube-proxy", "containerd")
	if c.has("kube-proxy") {
		if out, err := run(ctx, filepath.Join(c.Bin, "kube-proxy"), "--cleanup", "--config="+filepath.Join(c.Dir, "kube-proxy.yaml")); err != nil {
			c.log("node: kube-proxy --cleanup: %v\n%s", err, out)
		}
	}
	// The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...)
	// stay after it stops, and those kube-proxy's cleanup missed.
	if err := deleteChains(ctx, newChains(c.before, readHost(ctx), "KUBE-")); err != nil {
		errs = append(errs, err)
	}
	c.stopForwarder()
	if c.CP != nil {
		if err := c.CP.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		if _, err := run(ctx, "ip", "link", "delete", Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	// The kubelet's QoS cgroups outlive it by design; they are ours.
	if err := removeCgroups(newCgroups(c.before)); err != nil {
		errs = append(errs, err)
	}
	if err := restoreSysctls(c.before); err != nil {
		errs = append(errs, err)
	}
	dirs := []string{c.Dir}
	if c.CP != nil {
		dirs = append(dirs, c.CP.Dir)
	}
	left := diffHost(c.before, readHost(ctx), dirs)
	if !left.empty() {
		errs = append(errs, fmt.Errorf("left on the host after teardown: %s", left))
		if err := sweep(ctx, left); err != nil {
			errs = append(errs, fmt.Errorf("sweep: %w", err))
		}
	}
	if len(errs) == 0 || os.Getenv("OPERATOR_NODE_KEEP") == "" {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func newCgroups(before hostState) []string {
	var out []string
	for _, dir := range cgroupQoSRoots() {
		if !before.cgroups[dir] {
			out = append(out, dir)
		}
	}
	return out
}

func (c *Cluster) has(name string) bool {
	for _, p := range c.procs {
		if p.Name() == name {
			return true
		}
	}
	return false
}

func (c *Cluster) running(name string) bool {
	for _, p := range c.procs {
		if p.Name() == name && p.Running() {
			return true
		}
	}
	return false
}

// drain deletes every Pod and waits until containerd runs no container:
// the kubelet stops each sandbox, which releases its network namespace and
// veth through CNI.
func (c *Cluster) drain(ctx context.Context) error {
	cs := c.CP.Clientset()
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	for _, ns := range nss.Items {
		if err := cs.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("drain: delete pods in %s: %w", ns.Name, err)
		}
	}
	return poll(ctx, 90*time.Second, 500*time.Millisecond, "drain: every Pod gone from the node", func(ctx context.Context) (bool, string, error) {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		out, err := c.ctr(ctx, "tasks", "ls", "-q")
		if err != nil {
			return false, err.Error(), nil
		}
		tasks := strings.Fields(out)
		mounts := mountsUnder(filepath.Join(c.Dir, "kubelet"))
		return len(pods.Items) == 0 && len(tasks) == 0 && len(mounts) == 0,
			fmt.Sprintf("%d pods, %d tasks, volume mounts %v", len(pods.Items), len(tasks), mounts), nil
	})
}

// removeContainers removes the stopped containers the kubelet left (it
// garbage-collects them lazily), so that containerd holds no mount.
func (c *Cluster) removeContainers(ctx context.Context) error {
	out, err := c.ctr(ctx, "containers", "ls", "-q")
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range strings.Fields(out) {
		if _, err := c.ctr(ctx, "tasks", "delete", "--force", id); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
		if _, err := c.ctr(ctx, "containers", "delete", id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
