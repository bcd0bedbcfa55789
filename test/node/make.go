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
