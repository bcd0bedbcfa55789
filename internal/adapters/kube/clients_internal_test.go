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
		name        string
		opts        Options
		wantUA      string
		wantQPS     float32
		wantBurst   int
		wantLimiter bool
		wantErr     bool
	}{
		{name: "defaults", wantUA: "hexagonal-operator/" + version.Version, wantQPS: DefaultQPS, wantBurst: DefaultBurst, wantLimiter: true},
		{name: "explicit", opts: Options{QPS: 5, Burst: 7, UserAgent: "tester/1"}, wantUA: "tester/1", wantQPS: 5, wantBurst: 7, wantLimiter: true},
		{name: "negative qps turns limiting off", opts: Options{QPS: -1}, wantUA: "hexagonal-operator/" + version.Version, wantQPS: -1, wantBurst: DefaultBurst},
		{name: "negative burst", opts: Options{Burst: -1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := &rest.Config{Host: "https://127.0.0.1:1", UserAgent: "from-kubeconfig", QPS: 1, Burst: 2}
			got, err := configFor(in, tt.opts)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantUA, got.UserAgent)
			assert.Equal(t, tt.wantQPS, got.QPS)
			assert.Equal(t, tt.wantBurst, got.Burst)
			assert.Equal(t, tt.wantLimiter, got.RateLimiter != nil)
			if tt.wantLimiter {
				assert.Equal(t, tt.wantQPS, got.RateLimiter.QPS())
			}
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
