package events_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hexagonal-operator/operator/internal/adapters/events"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Not parallel: it counts goroutines.
func TestStopLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cs := fake.NewClientset()
	r, err := events.New(cs, events.Options{}, nil)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	waitEvents(t, cs, "ns", 1)
	// A series left to write on Stop.
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	r.Eventf(pod("ns", "p"), ports.EventTypeNormal, "Labeled", "Label", "note")
	require.NoError(t, r.Stop(context.Background()))
}
