package helm_test

import (
	"os"
	"testing"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestMain fails the package when any child process (helm, kubectl, etcd,
// kube-apiserver) outlives the tests.
func TestMain(m *testing.M) {
	os.Exit(controlplane.WithoutChildren(m.Run()))
}
