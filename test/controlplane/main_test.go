package controlplane_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestMain fails the package when any child process (etcd, kube-apiserver,
// kube-controller-manager) outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if left := controlplane.Children(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left running after the tests: %s\n", strings.Join(left, ", "))
		code = 1
	}
	os.Exit(code)
}
