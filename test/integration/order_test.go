package integration_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// hookOrder records the OnStart and OnStop hooks fx runs, each as the
// function that appended it and the hook's function: a server built on
// internal/httpserve starts with httpserve's method, appended by its
// adapter.
type hookOrder struct {
	mu          sync.Mutex
	start, stop []string
}

func (h *hookOrder) LogEvent(e fxevent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ev := e.(type) {
	case *fxevent.OnStartExecuting:
		h.start = append(h.start, ev.CallerName+" "+ev.FunctionName)
	case *fxevent.OnStopExecuting:
		h.stop = append(h.stop, ev.CallerName+" "+ev.FunctionName)
	}
}

// index is the position of the first hook whose names contain part.
func index(t *testing.T, hooks []string, part string) int {
	t.Helper()
	i := slices.IndexFunc(hooks, func(h string) bool { return strings.Contains(h, part) })
	require.GreaterOrEqual(t, i, 0, "no hook of %s in %v", part, hooks)
	return i
}

// The parts start after what they are built from and in the order the
// composition states where nothing depends: logging, the preflight checks,
// telemetry, the webhook server, the informers, the elector, the Event
// recorder, the probes, the controllers; and stop in reverse, so a SIGTERM
// stops the controllers and releases the Lease before the webhook server
// drains.
func TestPartsStartInOrderAndStopInReverse(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	_, err = cp.InstallCRDs(context.Background(), root+"/config/crd", nil)
	require.NoError(t, err)
	hooks := &hookOrder{}
	op := startOperator(t, operatorConfig(t, cp, "--leader-elect", "--controllers=replicaset,chaospod"),
		fx.WithLogger(func() fxevent.Logger { return hooks }))
	op.stop(t)

	want := []string{
		"adapters/logging.newLogger",
		"internal/app.preflight",
		"internal/app.permissionCheck",
		"internal/app.chaosPodCRDCheck",
		"adapters/metrics.(*Server).Start",
		"adapters/kube.(*APIServerProbe).Start",
		"adapters/webhook.(*Server).Start",
		"adapters/cache.(*Cache).Start",
		"adapters/leaderelection.(*Elector).Start",
		"adapters/events.(*Recorder).Start",
		"adapters/health.newServer",
		"adapters/controller.(*Controller).Start",
	}
	var at []int
	for _, w := range want {
		at = append(at, index(t, hooks.start, w))
	}
	assert.True(t, slices.IsSorted(at), "start order %v of %v", at, hooks.start)

	stops := []string{
		"adapters/controller.(*Controller).Stop",
		"adapters/health.newServer",
		"adapters/events.(*Recorder).Stop",
		"adapters/leaderelection.(*Elector).Stop",
		"adapters/cache.(*Cache).Stop",
		"adapters/webhook.(*Server).Stop",
		"adapters/metrics.(*Server).Stop",
		"adapters/logging.newLogger",
	}
	at = at[:0]
	for _, w := range stops {
		at = append(at, index(t, hooks.stop, w))
	}
	assert.True(t, slices.IsSorted(at), "stop order %v of %v", at, hooks.stop)
}
