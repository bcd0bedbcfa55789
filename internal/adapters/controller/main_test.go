package controller_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops what it started; after the last one no goroutine of a
// controller, its queue or its gates may be left.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
