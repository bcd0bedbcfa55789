package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

func main() {
	bin := flag.String("bin", "bin", "folder with operator, etcd, kube-apiserver, kube-controller-manager and kubectl")
	state := flag.String("state", ".run", "folder for the control plane's state, certificates and logs")
	flag.Parse()
	if err := run(*bin, *state); err != nil {
		fmt.Fprintf(os.Stderr, "make run: %v\n", err)
		os.Exit(1)
	}
}

func run(bin, state string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if os.Getenv(controlplane.AssetsEnv) == "" {
		_ = os.Setenv(controlplane.AssetsEnv, bin)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	began := time.Now()
	fmt.Println("▸ starting etcd, kube-apiserver and kube-controller-manager …")
	cp, err := controlplane.Start(ctx, controlplane.Options{ControllerManager: true, Dir: filepath.Join(state, "controlplane")})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("▸ stopping the control plane …")
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "make run: %v\n", err)
		}
	}()
	fmt.Printf("  API server ready at %s (%s)\n", cp.Config.Host, time.Since(began).Round(100*time.Millisecond))

	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	webhookPort, metricsPort, healthPort := ports[0], ports[1], ports[2]
	certDir := filepath.Join(state, "certs")
	if _, err := cp.IssueServingCert(certDir); err != nil {
		return err
	}
	server := controlplane.WebhookServer{Host: "127.0.0.1:" + strconv.Itoa(webhookPort), CABundle: cp.CACert()}
	if err := install(ctx, cp, root, server); err != nil {
		return err
	}

	kubeconfig, err := operatorKubeconfig(ctx, cp, root, state)
	if err != nil {
		return err
	}

	logPath := filepath.Join(state, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	operator := exec.Command(filepath.Join(bin, "operator"),
		"--kubeconfig="+kubeconfig,
		"--leader-elect",
		"--leader-election-namespace="+operatorNamespace,
		"--webhook-port="+strconv.Itoa(webhookPort),
		"--webhook-cert-dir="+certDir,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(healthPort),
		"--zap-encoder=console",
	)
	operator.Env = append(os.Environ(), "POD_NAMESPACE="+operatorNamespace)
	operator.Stdout, operator.Stderr = logFile, logFile
	operator.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fmt.Println("▸ starting the operator …")
	started := time.Now()
	if err := operator.Start(); err != nil {
		return fmt.Errorf("start operator: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- operator.Wait() }()
	stopOperator := func() {
		_ = operator.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited: //nolint:errcheck // after SIGTERM the exit status is the signal's; only the exit counts
		case <-time.After(operatorStopGrace):
			_ = operator.Process.Kill()
			<-exited //nolint:errcheck // likewise after SIGKILL
		}
	}

	// The instructions are printed once the operator is ready, so that
	// `kubectl apply` right after them meets serving webhooks.
	health := "http://127.0.0.1:" + strconv.Itoa(healthPort)
	switch err := waitReady(ctx, health+"/readyz", exited); {
	case errors.Is(err, errExited):
		return fmt.Errorf("%w (see %s)", err, logPath)
	case err != nil && ctx.Err() == nil:
		stopOperator()
		return fmt.Errorf("%w (see %s)", err, logPath)
	case err != nil: // Ctrl-C while starting
		fmt.Println("\n▸ stopping the operator …")
		stopOperator()
		return nil
	}

	kubectl := short(filepath.Join(bin, "kubectl")) + " --kubeconfig " + short(cp.KubeconfigPath)
	fmt.Printf(`▸ operator ready as %s/%s (%s; log: %s)
  metrics  http://127.0.0.1:%d/metrics
  health   %s/readyz

  try it:
    %s apply -k config/samples/
    %s get replicasets --show-labels
    %s get chaospods,pods
    %s get events

  %s
`, operatorNamespace, operatorServiceAccount, time.Since(started).Round(100*time.Millisecond), short(logPath),
		metricsPort, health, kubectl, kubectl, kubectl, kubectl, readyLine)

	select {
	case err := <-exited:
		return fmt.Errorf("operator exited: %v (see %s)", err, logPath) //nolint:errorlint // nil after exit status 0, which %v prints as <nil> and %w garbles
	case <-ctx.Done():
	}
	fmt.Println("\n▸ stopping the operator …")
	stopOperator()
	return nil
}

// install applies the CRDs, RBAC and webhook configurations that exist in
// config/, pointing webhooks at the local operator.
func install(ctx context.Context, cp *controlplane.ControlPlane, root string, server controlplane.WebhookServer) error {
	if dir := filepath.Join(root, "config", "crd"); exists(dir) {
		if _, err := cp.InstallCRDs(ctx, dir, &server); err != nil {
			return err
		}
		fmt.Println("  installed the CRDs from config/crd")
	}
	// From config/default, so the configurations have the names they are
	// deployed with (and that config/rbac's rules name).
	if dir := filepath.Join(root, "config", "default"); exists(dir) {
		if _, err := cp.InstallWebhooks(ctx, dir, server); err != nil {
			return err
		}
		fmt.Println("  installed the webhook configurations from config/webhook (as config/default names them)")
	}
	return nil
}

// short spells p relative to the working directory when it lies inside
// it (bin/kubectl rather than /home/…/bin/kubectl), for shorter, friendlier
// instructions.
func short(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

// readyLine ends what run prints once everything is up; tests wait for it.
const readyLine = "Ctrl-C stops the operator and the control plane."

// operatorStopGrace is how long the operator gets to stop on SIGTERM: a
// little more than its default --shutdown-timeout.
const operatorStopGrace = 35 * time.Second

// operatorReadyTimeout bounds the wait for the operator's /readyz: caches
// synced and webhooks serving.
const operatorReadyTimeout = 60 * time.Second

var errExited = errors.New("operator exited before it was ready")

// waitReady polls url until it answers 200, the operator exits, ctx ends or
// operatorReadyTimeout passes.
func waitReady(ctx context.Context, url string, exited <-chan error) error {
	timeout := time.After(operatorReadyTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := client.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("%w: %v", errExited, err) //nolint:errorlint // nil after exit status 0, which %v prints as <nil> and %w garbles
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return fmt.Errorf("operator not ready after %s", operatorReadyTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Where config/default deploys the operator, and as whom it runs.
const (
	operatorNamespace      = "hexagonal-operator-system"
	operatorServiceAccount = "hexagonal-operator-controller-manager"
	// tokenLifetime bounds a `make run` session: the operator reads its
	// token once, from the kubeconfig.
	tokenLifetime = 24 * time.Hour
)

// operatorKubeconfig applies config/rbac and config/policy as
// config/default deploys them and writes a kubeconfig with a token of the
// operator's ServiceAccount, so the local operator has exactly the
// permissions, and the confinement, it has in a cluster.
func operatorKubeconfig(ctx context.Context, cp *controlplane.ControlPlane, root, state string) (string, error) {
	objs, err := controlplane.Manifests(filepath.Join(root, "config", "default"))
	if err != nil {
		return "", err
	}
	var rbac []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			rbac = append(rbac, o)
		}
	}
	if err := cp.Apply(ctx, rbac...); err != nil {
		return "", fmt.Errorf("install RBAC and admission policies: %w", err)
	}
	tr, err := cp.Clientset().CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, operatorServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(tokenLifetime.Seconds()))}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", operatorNamespace, operatorServiceAccount, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthorityData: cp.CACert()}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["operator"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "operator", Namespace: operatorNamespace}
	kc.CurrentContext = "operator"
	path := filepath.Join(state, "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", err
	}
	fmt.Println("  installed the RBAC from config/rbac and the admission policies from config/policy; the operator runs as its ServiceAccount")
	return path, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

func freePorts(n int) ([]int, error) {
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
