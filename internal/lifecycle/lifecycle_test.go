package lifecycle_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
)

// journal records starts and stops in order.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) part(name string, phase lifecycle.Phase) lifecycle.Part {
	record := func(what string) func(context.Context) error {
		return func(context.Context) error {
			j.mu.Lock()
			defer j.mu.Unlock()
			j.entries = append(j.entries, what+" "+name)
			return nil
		}
	}
	return lifecycle.Part{Name: name, Phase: phase, Start: record("start"), Stop: record("stop")}
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.entries...)
}

func supply(parts ...lifecycle.Part) fx.Option {
	var opts []fx.Option
	for _, p := range parts {
		opts = append(opts, fx.Supply(fx.Annotate(p, fx.ResultTags(lifecycle.Group))))
	}
	return fx.Options(opts...)
}

// Parts start phase by phase, by name within a phase, whatever order fx
// built them in, and stop in reverse.
func TestPartsStartByPhaseAndStopInReverse(t *testing.T) {
	t.Parallel()
	j := &journal{}
	app := fxtest.New(t, lifecycle.Module, supply(
		j.part("reconciler", lifecycle.Controllers),
		j.part("webhook", lifecycle.Webhooks),
		j.part("informers", lifecycle.Caches),
		j.part("metrics", lifecycle.Telemetry),
		j.part("apiserver-probe", lifecycle.Telemetry),
		j.part("leader-election", lifecycle.Election),
		j.part("webhook-certificates", lifecycle.Certificates),
		j.part("logging", lifecycle.Logging),
	), fx.NopLogger)
	app.RequireStart().RequireStop()

	assert.Equal(t, []string{
		"start logging", "start apiserver-probe", "start metrics", "start informers",
		"start webhook-certificates", "start webhook", "start leader-election", "start reconciler",
		"stop reconciler", "stop leader-election", "stop webhook", "stop webhook-certificates",
		"stop informers", "stop metrics", "stop apiserver-probe", "stop logging",
	}, j.all())
}

// A part that fails to start stops the start: the parts of later phases
// never start, and those already started are stopped.
func TestAFailedStartStopsWhatStarted(t *testing.T) {
	t.Parallel()
	j := &journal{}
	check := lifecycle.Part{Name: "permissions", Phase: lifecycle.Permissions,
		Start: func(context.Context) error { return errors.New("lacks permissions") }}
	app := fx.New(lifecycle.Module, supply(
		j.part("logging", lifecycle.Logging),
		check,
		j.part("webhook", lifecycle.Webhooks),
	), fx.NopLogger)
	require.NoError(t, app.Err())
	err := app.Start(t.Context())
	require.ErrorContains(t, err, "lacks permissions")
	assert.Equal(t, []string{"start logging", "stop logging"}, j.all())
}

func TestPhaseNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "logging", lifecycle.Logging.String())
	assert.Equal(t, "controllers", lifecycle.Controllers.String())
	assert.Equal(t, "phase(99)", lifecycle.Phase(99).String())
}
