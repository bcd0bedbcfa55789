package controlplane

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure a control plane. The zero value starts etcd and
// kube-apiserver with RBAC authorization and no audit log.
type Options struct {
	// ControllerManager also runs kube-controller-manager with the
	// replicaset, garbagecollector, namespace and serviceaccount-token
	// controllers, so ReplicaSets get Pods and owner references cascade.
	ControllerManager bool
	// AuditPolicy, when set, turns the audit log on with this policy (YAML).
	// DefaultAuditPolicy records every request at Metadata level.
	AuditPolicy string
	// APIServerFlags are extra kube-apiserver flags ("--name=value"); one
	// named like a default flag replaces it (the node tier turns the
	// ServiceAccount admission plugin back on this way).
	APIServerFlags []string
	// StartTimeout bounds how long Start waits for readiness (default 60s).
	StartTimeout time.Duration
	// StopGrace is how long a component gets between TERM and KILL
	// (default 5s).
	StopGrace time.Duration
	// Dir, when set, holds the state instead of a new temporary folder; it
	// is not removed on Stop. `make run` uses it to keep state in one place.
	Dir string
	// EtcdDataFrom, when set, is the etcd data folder of a stopped control
	// plane (its EtcdDataDir); etcd starts from a copy of it instead of
	// empty, so every object stored there is back at once, and the folder
	// itself stays as it was. The bench meets the same tens of thousands of
	// objects in every turn this way instead of creating them each time.
	EtcdDataFrom string
}

// DefaultAuditPolicy logs every request at Metadata level: who did which
// verb on which resource, without bodies.
const DefaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// ControlPlane is a running etcd + kube-apiserver (+ kube-controller-manager).
type ControlPlane struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for the admin user.
	KubeconfigPath string
	// Dir holds certificates, keys, data and component logs.
	Dir string
	// AuditLogPath is the audit log, when Options.AuditPolicy was set.
	AuditLogPath string
	// ServiceAccountKeyPath signs ServiceAccount tokens (PEM private key).
	ServiceAccountKeyPath string
	// CACertPath is the CA that signs every certificate here (PEM).
	CACertPath string

	opts      Options
	ca        *authority
	ownDir    bool
	processes []*process // in start order
	stopOnce  sync.Once
	stopErr   error
}

// Start runs a control plane and waits until the API server is ready. The
// caller must Stop it. ctx bounds the start only.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 5 * time.Second
	}
	bins := map[string]string{}
	names := []string{"etcd", "kube-apiserver"}
	if opts.ControllerManager {
		names = append(names, "kube-controller-manager")
	}
	for _, name := range names {
		path, err := Binary(name)
		if err != nil {
			return nil, err
		}
		bins[name] = path
	}

	cp := &ControlPlane{opts: opts, Dir: opts.Dir}
	if cp.Dir == "" {
		dir, err := os.MkdirTemp("", "controlplane-")
		if err != nil {
			return nil, fmt.Errorf("create state folder: %w", err)
		}
		cp.Dir, cp.ownDir = dir, true
	} else if err := os.MkdirAll(cp.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state folder: %w", err)
	}
	if err := cp.writeCredentials(); err != nil {
		_ = cp.Stop()
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	// Ports are picked free but released before the components bind them;
	// a parallel test can steal one, so a start that fails early is retried.
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = cp.startComponents(ctx, bins); err == nil {
			return cp, nil
		}
		_ = cp.stopProcesses() // the start's error is the one to report
		if ctx.Err() != nil {
			break
		}
	}
	_ = cp.Stop()
	return nil, fmt.Errorf("start control plane: %w", err)
}

// writeCredentials creates the CA, the API server's serving certificate,
// the admin client certificate and the ServiceAccount signing key.
func (cp *ControlPlane) writeCredentials() error {
	ca, err := newAuthority()
	if err != nil {
		return err
	}
	cp.ca = ca
	cp.CACertPath = filepath.Join(cp.Dir, "ca.crt")
	if err := os.WriteFile(cp.CACertPath, ca.certPEM, 0o600); err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	serving, err := ca.issue("kube-apiserver", nil,
		[]string{"127.0.0.1", "localhost", "10.0.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	if _, _, err := serving.write(cp.Dir, "apiserver.crt", "apiserver.key"); err != nil {
		return err
	}
	admin, err := ca.issue("admin", []string{"system:masters"}, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	if _, _, err := admin.write(cp.Dir, "admin.crt", "admin.key"); err != nil {
		return err
	}
	priv, pub, err := serviceAccountKeys()
	if err != nil {
		return err
	}
	cp.ServiceAccountKeyPath = filepath.Join(cp.Dir, "sa.key")
	if err := os.WriteFile(cp.ServiceAccountKeyPath, priv, 0o600); err != nil {
		return fmt.Errorf("write service account key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(cp.Dir, "sa.pub"), pub, 0o600); err != nil {
		return fmt.Errorf("write service account public key: %w", err)
	}
	if cp.opts.AuditPolicy != "" {
		if err := os.WriteFile(filepath.Join(cp.Dir, "audit-policy.yaml"), []byte(cp.opts.AuditPolicy), 0o600); err != nil {
			return fmt.Errorf("write audit policy: %w", err)
		}
		cp.AuditLogPath = filepath.Join(cp.Dir, "audit.log")
	}
	cp.Config = &rest.Config{
		TLSClientConfig: rest.TLSClientConfig{CAData: ca.certPEM, CertData: admin.CertPEM, KeyData: admin.KeyPEM},
		QPS:             -1, // tests measure the operator, not client-side throttling
	}
	return nil
}

func (cp *ControlPlane) startComponents(ctx context.Context, bins map[string]string) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	dataDir := cp.EtcdDataDir()
	_ = os.RemoveAll(dataDir) // a retried start begins afresh
	if cp.opts.EtcdDataFrom != "" {
		if err := copyEtcdData(dataDir, cp.opts.EtcdDataFrom); err != nil {
			return err
		}
	}

	etcd, err := startProcess("etcd", bins["etcd"], cp.Dir, []string{
		"--name=default",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	})
	if err != nil {
		return err
	}
	cp.processes = append(cp.processes, etcd)
	if err := waitHTTP(ctx, etcd, http.DefaultClient, etcdURL+"/health"); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + cp.Dir,
		"--tls-cert-file=" + filepath.Join(cp.Dir, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(cp.Dir, "apiserver.key"),
		"--client-ca-file=" + cp.CACertPath,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(cp.Dir, "sa.pub"),
		"--service-account-signing-key-file=" + cp.ServiceAccountKeyPath,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// The endpoint reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		// No kubelet, no ServiceAccount controller: Pods must not wait for
		// a "default" ServiceAccount that nobody creates.
		"--disable-admission-plugins=ServiceAccount",
		"--v=0",
	}
	if cp.AuditLogPath != "" {
		args = append(args,
			"--audit-policy-file="+filepath.Join(cp.Dir, "audit-policy.yaml"),
			"--audit-log-path="+cp.AuditLogPath,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
		)
	}
	args = overrideFlags(args, cp.opts.APIServerFlags)
	apiserver, err := startProcess("kube-apiserver", bins["kube-apiserver"], cp.Dir, args)
	if err != nil {
		return err
	}
	cp.processes = append(cp.processes, apiserver)

	cp.Config.Host = "https://127.0.0.1:" + strconv.Itoa(apiPort)
	if err := cp.waitAPIServer(ctx, apiserver); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	if err := cp.writeKubeconfig(); err != nil {
		return err
	}
	if cp.opts.ControllerManager {
		kcm, err := startProcess("kube-controller-manager", bins["kube-controller-manager"], cp.Dir, []string{
			"--kubeconfig=" + cp.KubeconfigPath,
			"--controllers=replicaset,garbagecollector,namespace,serviceaccount-token",
			"--service-account-private-key-file=" + cp.ServiceAccountKeyPath,
			"--root-ca-file=" + cp.CACertPath,
			"--leader-elect=false",
			"--secure-port=0",
			"--concurrent-replicaset-syncs=10",
			"--v=0",
		})
		if err != nil {
			return err
		}
		cp.processes = append(cp.processes, kcm)
	}
	return nil
}

// EtcdDataDir is etcd's data folder; once the control plane is stopped it
// can seed another through Options.EtcdDataFrom.
func (cp *ControlPlane) EtcdDataDir() string { return filepath.Join(cp.Dir, "etcd") }

// copyEtcdData copies a stopped etcd's data folder to dst, which etcd
// wants readable by its owner only.
func copyEtcdData(dst, from string) error {
	if err := os.CopyFS(dst, os.DirFS(from)); err != nil {
		return fmt.Errorf("copy etcd data from %s: %w", from, err)
	}
	if err := os.Chmod(dst, 0o700); err != nil {
		return fmt.Errorf("copy etcd data from %s: %w", from, err)
	}
	return nil
}

// overrideFlags appends extra to args, dropping each flag of args that
// extra names again ("--name=value" form).
func overrideFlags(args, extra []string) []string {
	name := func(flag string) string { n, _, _ := strings.Cut(flag, "="); return n }
	named := map[string]bool{}
	for _, f := range extra {
		named[name(f)] = true
	}
	out := make([]string, 0, len(args)+len(extra))
	for _, f := range args {
		if !named[name(f)] {
			out = append(out, f)
		}
	}
	return append(out, extra...)
}

// waitHTTP polls url until it answers 200 or p exits.
func waitHTTP(ctx context.Context, p *process, client *http.Client, url string) error {
	for {
		if !p.running() {
			return p.exitError()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w after %s: %w; last lines of its log:\n%s", errNotReady, "waiting", ctx.Err(), p.tail(30))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitAPIServer waits for /readyz and for the "default" namespace, which the
// API server creates shortly after it turns ready; tests use it at once.
func (cp *ControlPlane) waitAPIServer(ctx context.Context, p *process) error {
	httpClient, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return fmt.Errorf("build admin http client: %w", err)
	}
	defer httpClient.CloseIdleConnections()
	if err := waitHTTP(ctx, p, httpClient, cp.Config.Host+"/readyz"); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfigAndClient(cp.Config, httpClient)
	if err != nil {
		return err
	}
	for {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: namespace default not created: %w", errNotReady, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (cp *ControlPlane) writeKubeconfig() error {
	cp.KubeconfigPath = filepath.Join(cp.Dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["controlplane"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthorityData: cp.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cp.Config.CertData, ClientKeyData: cp.Config.KeyData}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "controlplane", AuthInfo: "admin", Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "admin"
	if err := clientcmd.WriteToFile(*cfg, cp.KubeconfigPath); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// Clientset returns an admin clientset.
func (cp *ControlPlane) Clientset() kubernetes.Interface {
	// NewForConfig fails only on a malformed config, which Start built.
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		panic(fmt.Sprintf("controlplane: admin clientset: %v", err))
	}
	return cs
}

// CACert is the PEM CA bundle that verifies every certificate issued here.
func (cp *ControlPlane) CACert() []byte { return cp.ca.certPEM }

// Pids returns the process ids of the running components.
func (cp *ControlPlane) Pids() map[string]int {
	out := map[string]int{}
	for _, p := range cp.processes {
		out[p.name] = p.Pid()
	}
	return out
}

// Logs returns the last lines of every component's log.
func (cp *ControlPlane) Logs(lines int) string {
	var b strings.Builder
	for _, p := range cp.processes {
		fmt.Fprintf(&b, "==> %s (%s) <==\n%s\n", p.name, p.logPath, p.tail(lines))
	}
	return b.String()
}

// StopComponent stops one component (for example "kube-apiserver" in an
// outage test) and RestartComponent starts it again with the same flags.
func (cp *ControlPlane) StopComponent(name string) error {
	for _, p := range cp.processes {
		if p.name == name {
			return p.stop(cp.opts.StopGrace)
		}
	}
	return fmt.Errorf("no component %q", name)
}

// RestartComponent starts a stopped component again with the same flags and
// waits for it to be ready (for the API server: /readyz).
func (cp *ControlPlane) RestartComponent(ctx context.Context, name string) error {
	for i, p := range cp.processes {
		if p.name != name {
			continue
		}
		if p.running() {
			return fmt.Errorf("%s is running", name)
		}
		np, err := startProcess(p.name, p.cmd.Path, cp.Dir, p.cmd.Args[1:])
		if err != nil {
			return err
		}
		cp.processes[i] = np
		if name == "kube-apiserver" {
			return cp.waitAPIServer(ctx, np)
		}
		return nil
	}
	return fmt.Errorf("no component %q", name)
}

// Stop stops every component in reverse start order and removes the state
// folder it created. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		err := cp.stopProcesses()
		if cp.ownDir {
			if rmErr := os.RemoveAll(cp.Dir); rmErr != nil {
				err = errors.Join(err, fmt.Errorf("remove %s: %w", cp.Dir, rmErr))
			}
		}
		cp.stopErr = err
	})
	return cp.stopErr
}

func (cp *ControlPlane) stopProcesses() error {
	var errs []error
	for i := len(cp.processes) - 1; i >= 0; i-- {
		errs = append(errs, cp.processes[i].stop(cp.opts.StopGrace))
	}
	cp.processes = nil
	return errors.Join(errs...)
}
