package controlplane_test

import (
	"os"
	"testing"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestMain fails the package when any child process (etcd, kube-apiserver,
// kube-controller-manager) outlives the tests.
func TestMain(m *testing.M) {
	os.Exit(controlplane.WithoutChildren(m.Run()))
}
