package contract_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when an adapter goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
