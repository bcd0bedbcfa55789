package kube_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a client goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
