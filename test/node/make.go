package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// Make runs a target of the repository's Makefile against the cluster, the
// way the README tells users to: KUBECONFIG is the cluster's admin
// kubeconfig, kubectl the one `make tools` builds, IMG the node tier's
// operator image. It returns the combined output.
func (c *Cluster) Make(ctx context.Context, target string, vars ...string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	args := append([]string{"--no-print-directory", target, "IMG=" + OperatorIMG, "KUBECTL=" + filepath.Join(c.Bin, "kubectl")}, vars...)
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.CP.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("make %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Kubectl runs the cluster's kubectl as the admin.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return run(ctx, filepath.Join(c.Bin, "kubectl"), append([]string{"--kubeconfig", c.CP.KubeconfigPath}, args...)...)
}

// Helm runs the helm `make tools` builds against the cluster as the admin,
// with the repository root as its working folder (so dist/chart is the
// chart) and its cache, configuration and data in the node's folder, which
// Stop removes. It returns the combined output.
func (c *Cluster) Helm(ctx context.Context, args ...string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(c.Bin, "helm")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w (make tools builds it)", bin, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = root
	home := filepath.Join(c.Dir, "helm")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.CP.KubeconfigPath, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
