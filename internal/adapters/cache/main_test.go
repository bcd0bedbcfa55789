package cache_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when an informer goroutine outlives Stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
