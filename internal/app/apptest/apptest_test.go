package apptest_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/app/apptest"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// controllers is the group the controller module runs, by name.
type controllers struct {
	fx.In
	All []*controller.Controller `group:"controllers"`
}

func (c controllers) names() []string {
	var names []string
	for _, x := range c.All {
		names = append(names, x.Name())
	}
	return names
}

// The whole graph builds for the flags, and holds what they asked for.
func TestNewBuildsTheWholeGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		args            []string
		wantControllers []string
		wantElection    bool
	}{
		{"default", nil, []string{"replicaset", "chaospod"}, false},
		{"no controllers", []string{"--controllers="}, nil, false},
		{"leader election", []string{"--leader-elect", "--controllers=replicaset"}, []string{"replicaset"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var (
				got      controllers
				election leaderelection.Options
			)
			apptest.New(t, apptest.Config(t, tt.args...), fx.Populate(&got, &election))
			assert.ElementsMatch(t, tt.wantControllers, got.names())
			assert.Equal(t, tt.wantElection, election.Enabled)
		})
	}
}

// A swap is one option: what the graph holds, and hands its consumers, is
// the test's.
func TestOneOptionSwapsAnAdapter(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC)

	t.Run("decorate the clock", func(t *testing.T) {
		t.Parallel()
		clock := memory.NewClock(now)
		var got ports.Clock
		apptest.New(t, apptest.Config(t),
			fx.Decorate(func(ports.Clock) ports.Clock { return clock }),
			fx.Populate(&got))
		require.Same(t, clock, got)
	})

	// Beside the helper's own fx.Replace at the root: one per type.
	t.Run("replace the clock", func(t *testing.T) {
		t.Parallel()
		clock := memory.NewClock(now)
		var got ports.Clock
		apptest.New(t, apptest.Config(t),
			fx.Replace(fx.Annotate(clock, fx.As(new(ports.Clock)))),
			fx.Populate(&got))
		require.Same(t, clock, got)
	})

	// The controllers are the consumers of app.Sources: each of their
	// watches passes through the decorated one.
	t.Run("decorate the sources", func(t *testing.T) {
		t.Parallel()
		var (
			mu      sync.Mutex
			watched []string
		)
		apptest.New(t, apptest.Config(t, "--controllers=replicaset"),
			fx.Decorate(func(next app.Sources) app.Sources {
				return func(w app.Watched) controller.Source {
					mu.Lock()
					defer mu.Unlock()
					watched = append(watched, w.Controller+" "+w.Resource.Resource)
					return next(w)
				}
			}),
			fx.Populate(new(controllers)))
		assert.ElementsMatch(t, []string{"replicaset replicasets", "replicaset pods"}, watched)
	})
}

// The graph's *rest.Config is the helper's, even when the flags name a
// kubeconfig that does not exist: nothing is read from disk. Each app has
// its own, so parallel tests that change it do not meet.
func TestTheRESTConfigIsTheHelpers(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := apptest.Config(t, "--kubeconfig="+missing)
	var first, second *rest.Config
	apptest.New(t, cfg, fx.Populate(&first))
	apptest.New(t, cfg, fx.Populate(&second))
	require.NotNil(t, first)
	assert.Equal(t, apptest.Host, first.Host)
	assert.NotSame(t, first, second)
}

// What does not build fails the test, with the cause first.
func TestMistakesFailTheTest(t *testing.T) {
	t.Parallel()
	type unprovided struct{}
	tests := []struct {
		name string
		run  func(testing.TB)
		want string
	}{
		{"a bad flag", func(t testing.TB) { apptest.Config(t, "--webhook-port=0") }, "--webhook-port"},
		{"an unknown flag", func(t testing.TB) { apptest.Config(t, "--no-such-flag") }, "no-such-flag"},
		{
			"a missing type",
			func(t testing.TB) { apptest.New(t, apptest.Config(t), fx.Invoke(func(unprovided) {})) },
			"missing type: apptest_test.unprovided",
		},
		{
			"a constructor's error",
			func(t testing.TB) {
				apptest.New(t, apptest.Config(t),
					fx.Decorate(func(ports.Clock) (ports.Clock, error) { return nil, errors.New("no clock today") }),
					fx.Populate(new(ports.Clock)))
			},
			"no clock today",
		},
		{
			"the rest.Config replaced again",
			func(t testing.TB) {
				apptest.New(t, apptest.Config(t), fx.Replace(&rest.Config{Host: "https://other.invalid"}))
			},
			"already decorated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fatal, stopped := fatalOf(t, tt.run)
			assert.True(t, stopped, "the helper went on after Fatalf")
			assert.Contains(t, fatal, tt.want)
		})
	}
}

// fatalOf runs f with a testing.TB whose Fatalf records its message and
// stops f's goroutine, as a real one does, without failing t.
func fatalOf(t *testing.T, f func(testing.TB)) (fatal string, stopped bool) {
	r := &recorder{TB: t}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		returned = true
	}()
	<-done
	return r.fatal, !returned
}

// recorder is a testing.TB for what the helpers do on failure; anything
// else goes to the embedded test, so an Errorf there would still fail it.
type recorder struct {
	testing.TB
	fatal string
}

func (*recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}
