// Command localcluster is `make run`: it starts a local control plane (etcd,
// kube-apiserver, kube-controller-manager), installs what the operator needs
// from config/ with webhooks pointed at the local process, starts
// bin/operator against it and prints how to use it. Ctrl-C stops
// everything; state lives in the --state folder.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

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

	logPath := filepath.Join(state, "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	operator := exec.Command(filepath.Join(bin, "operator"),
		"--kubeconfig="+cp.KubeconfigPath,
		"--webhook-port="+strconv.Itoa(webhookPort),
		"--webhook-cert-dir="+certDir,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--metrics-secure=false",
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(healthPort),
		"--zap-encoder=console",
	)
	operator.Stdout, operator.Stderr = logFile, logFile
	operator.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := operator.Start(); err != nil {
		return fmt.Errorf("start operator: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- operator.Wait() }()

	kubectl := filepath.Join(bin, "kubectl") + " --kubeconfig " + cp.KubeconfigPath
	fmt.Printf(`▸ operator running (log: %s)
  metrics  http://127.0.0.1:%d/metrics
  health   http://127.0.0.1:%d/readyz

  try it:
    %s apply -f config/samples/
    %s get replicasets --show-labels
    %s get events

  Ctrl-C stops the operator and the control plane.
`, logPath, metricsPort, healthPort, kubectl, kubectl, kubectl)

	select {
	case err := <-exited:
		return fmt.Errorf("operator exited: %v (see %s)", err, logPath)
	case <-ctx.Done():
	}
	fmt.Println("\n▸ stopping the operator …")
	_ = operator.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(35 * time.Second):
		_ = operator.Process.Kill()
		<-exited
	}
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
	if dir := filepath.Join(root, "config", "webhook"); exists(dir) {
		if _, err := cp.InstallWebhooks(ctx, dir, server); err != nil {
			return err
		}
		fmt.Println("  installed the webhook configurations from config/webhook")
	}
	return nil
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
