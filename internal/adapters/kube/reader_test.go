package kube_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
)

// Building a live reader checks its arguments and dials nothing; what it
// reads is held to the in-memory twin by the Reader contract suite
// (test/contract).
func TestNewReader(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: building must still succeed.
	clients, err := kube.NewClients(&rest.Config{Host: "https://127.0.0.1:1"}, kube.Options{})
	require.NoError(t, err)

	r, err := kube.NewReader[*chaosv1.ChaosPod](clients, chaosv1.GroupVersionResource)
	require.NoError(t, err, "does no I/O")
	assert.NotNil(t, r)

	tests := []struct {
		name     string
		clients  *kube.Clients
		resource schema.GroupVersionResource
	}{
		{"no clients", nil, chaosv1.GroupVersionResource},
		{"no version", clients, schema.GroupVersionResource{Resource: "pods"}},
		{"no resource", clients, schema.GroupVersionResource{Version: "v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := kube.NewReader[*corev1.Pod](tt.clients, tt.resource)
			assert.Error(t, err)
			assert.Nil(t, r)
		})
	}
}
