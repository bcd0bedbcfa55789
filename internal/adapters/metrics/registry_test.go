package metrics_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
)

func TestNewRegistryHasRuntimeCollectors(t *testing.T) {
	t.Parallel()
	reg, err := metrics.NewRegistry()
	require.NoError(t, err)
	families, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	assert.True(t, names["go_goroutines"], "Go collector missing")
	assert.True(t, names["process_start_time_seconds"], "process collector missing")
}

func TestNewRegistryIsNotShared(t *testing.T) {
	t.Parallel()
	a, err := metrics.NewRegistry()
	require.NoError(t, err)
	b, err := metrics.NewRegistry()
	require.NoError(t, err)
	// Each application registers the same names on its own registry.
	_, err = metrics.NewRESTClientMetrics(a)
	require.NoError(t, err)
	_, err = metrics.NewRESTClientMetrics(b)
	require.NoError(t, err)
}
