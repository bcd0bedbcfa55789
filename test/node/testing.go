package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// GateEnv names the variable `make test-node` sets. Without it the node
// tests skip (plain `go test ./...` on a machine without the node parts);
// with it, a missing part fails them.
const GateEnv = "OPERATOR_NODE_TEST"

// StartT starts a cluster for a test, or skips the test when GateEnv is
// unset. It stops the cluster in t.Cleanup and fails the test when the
// teardown leaves anything on the host; the components' logs are printed
// when the test failed.
func StartT(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(GateEnv) == "" {
		t.Skipf("node tier: set %s=1 or run `make test-node` (needs root, hack/node-setup.sh and test/tools/node/build.sh)", GateEnv)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	if dir := os.Getenv(controlplane.AssetsEnv); dir != "" {
		bin = dir
	}
	if missing := Prerequisites(bin); len(missing) > 0 {
		t.Fatalf("node tier: prerequisites missing (make test-node installs and builds them):\n  %s", strings.Join(missing, "\n  "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := Start(ctx, bin, t.Logf)
	if err != nil {
		t.Fatalf("node tier: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node tier: component logs\n%s", c.Logs(40))
		}
		began := time.Now()
		if err := c.Stop(); err != nil {
			t.Errorf("node tier: teardown: %v", err)
			return
		}
		t.Logf("node tier: torn down in %s, nothing left on the host", time.Since(began).Round(100*time.Millisecond))
	})
	return c
}
