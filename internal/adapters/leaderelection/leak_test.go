package leaderelection_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
)

// Not parallel: it counts goroutines.
func TestStopLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, err := leaderelection.New(fake.NewClientset(), prometheus.NewRegistry(), fast(leaderelection.Options{ID: "leak"}), nil)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background()))
	<-e.Elected()
	require.NoError(t, e.Stop(context.Background()))
}
