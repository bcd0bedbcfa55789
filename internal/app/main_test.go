package app_test

import (
	"testing"

	"github.com/hexagonal-operator/operator/test/operatortest"
)

// TestMain points klog, a process global, at its switchable sink before
// any test starts: the first application to start would otherwise set it
// while another test's clients read it.
func TestMain(m *testing.M) { operatortest.Main(m) }
