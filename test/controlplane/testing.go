package controlplane

import (
	"context"
	"testing"
	"time"
)

// StartT starts a control plane for a test and stops it in t.Cleanup, even
// when the test fails or panics. Component logs are printed when the test
// failed. A missing binary fails the test (it says to run `make tools`).
func StartT(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	began := time.Now()
	cp, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("controlplane: %v", err)
	}
	t.Logf("controlplane: ready in %s at %s", time.Since(began).Round(time.Millisecond), cp.Config.Host)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controlplane: component logs\n%s", cp.Logs(60))
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("controlplane: stop: %v", err)
		}
	})
	return cp
}
