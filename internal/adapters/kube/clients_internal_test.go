package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/version"
)

func TestConfigFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   Options
		wantUA string
	}{
		{name: "defaults", wantUA: "hexagonal-operator/" + version.Version},
		{name: "explicit", opts: Options{UserAgent: "tester/1"}, wantUA: "tester/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := &rest.Config{Host: "https://127.0.0.1:1", UserAgent: "from-kubeconfig", QPS: 1, Burst: 2}
			got := configFor(in, tt.opts)
			assert.Equal(t, tt.wantUA, got.UserAgent)
			assert.Equal(t, float32(-1), got.QPS, "no client-side throttling")
			assert.Nil(t, got.RateLimiter)
			assert.Equal(t, &rest.Config{Host: "https://127.0.0.1:1", UserAgent: "from-kubeconfig", QPS: 1, Burst: 2}, in, "input left alone")
		})
	}
}

func TestNewClients(t *testing.T) {
	t.Parallel()
	t.Run("needs a config", func(t *testing.T) {
		t.Parallel()
		c, err := NewClients(nil, Options{})
		assert.Error(t, err)
		assert.Nil(t, c)
	})
	t.Run("does no I/O", func(t *testing.T) {
		t.Parallel()
		// Nothing listens on port 1: building must still succeed.
		c, err := NewClients(&rest.Config{Host: "https://127.0.0.1:1"}, Options{})
		require.NoError(t, err)
		assert.NotNil(t, c.Kubernetes)
		assert.NotNil(t, c.Metadata)
		assert.NotNil(t, c.Dynamic)
	})
	t.Run("unusable TLS material fails early", func(t *testing.T) {
		t.Parallel()
		_, err := NewClients(&rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("not a certificate")}}, Options{})
		assert.Error(t, err)
	})
}
