package greeting_test

import (
	"context"
	"errors"
	"go/build"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/architecture"
)

var key = types.NamespacedName{Namespace: "lobby", Name: "welcome"}

func newGreeting(spec greetingv1.GreetingSpec, status greetingv1.GreetingStatus) *greetingv1.Greeting {
	return &greetingv1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec:       spec,
		Status:     status,
	}
}

func newStore() *memory.Store[*greetingv1.Greeting] {
	return memory.NewStore[*greetingv1.Greeting](greetingv1.GroupKind)
}

func TestMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec greetingv1.GreetingSpec
		want string
	}{
		{spec: greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}, want: "Hello, World!"},
		{spec: greetingv1.GreetingSpec{Name: "Ada", Salutation: "Good morning"}, want: "Good morning, Ada!"},
		{spec: greetingv1.GreetingSpec{Name: "World"}, want: "Hello, World!"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, greeting.Message(tt.spec), "%+v", tt.spec)
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	world := greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}
	tests := []struct {
		name       string
		existing   *greetingv1.Greeting
		failWrite  error
		wantStatus greetingv1.GreetingStatus
		wantEvents []string
		wantErr    func(error) bool
		wantWrite  bool
	}{
		{
			name:       "a new Greeting is greeted",
			existing:   newGreeting(world, greetingv1.GreetingStatus{}),
			wantStatus: greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1},
			wantEvents: []string{greeting.ReasonGreeted},
			wantWrite:  true,
		},
		{
			name:       "a stale message is replaced",
			existing:   newGreeting(world, greetingv1.GreetingStatus{Message: "Hi, World!", ObservedGeneration: 1}),
			wantStatus: greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1},
			wantEvents: []string{greeting.ReasonGreeted},
			wantWrite:  true,
		},
		{
			name:       "a stale observedGeneration is replaced",
			existing:   newGreeting(world, greetingv1.GreetingStatus{Message: "Hello, World!"}),
			wantStatus: greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1},
			wantEvents: []string{greeting.ReasonGreeted},
			wantWrite:  true,
		},
		{
			name:       "without a salutation the default greets",
			existing:   newGreeting(greetingv1.GreetingSpec{Name: "World"}, greetingv1.GreetingStatus{}),
			wantStatus: greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1},
			wantEvents: []string{greeting.ReasonGreeted},
			wantWrite:  true,
		},
		{
			name:       "an up-to-date status writes nothing",
			existing:   newGreeting(world, greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1}),
			wantStatus: greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1},
		},
		{
			name: "gone is done",
		},
		{
			name:      "deleted between read and write is done",
			existing:  newGreeting(world, greetingv1.GreetingStatus{}),
			failWrite: ports.ErrNotFound,
		},
		{
			name:      "a conflict is retried",
			existing:  newGreeting(world, greetingv1.GreetingStatus{}),
			failWrite: ports.ErrConflict,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrConflict) && !ports.IsTerminal(err) },
		},
		{
			name:      "an invalid write is terminal",
			existing:  newGreeting(world, greetingv1.GreetingStatus{}),
			failWrite: ports.ErrInvalid,
			wantErr:   ports.IsTerminal,
		},
		{
			name:      "forbidden is retried",
			existing:  newGreeting(world, greetingv1.GreetingStatus{}),
			failWrite: ports.ErrForbidden,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrForbidden) && !ports.IsTerminal(err) },
		},
		{
			name:      "a transient failure is retried",
			existing:  newGreeting(world, greetingv1.GreetingStatus{}),
			failWrite: errors.New("connection reset"),
			wantErr:   func(err error) bool { return err != nil && !ports.IsTerminal(err) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := newStore()
			events := memory.NewEventRecorder()
			var before string
			if tt.existing != nil {
				created, err := store.Create(ctx, tt.existing)
				require.NoError(t, err)
				before = created.ResourceVersion
			}
			if tt.failWrite != nil {
				store.FailNextWrites(tt.failWrite)
			}
			r, err := greeting.NewReconciler(store, store, events)
			require.NoError(t, err)

			res, err := r.Reconcile(ctx, ports.Request{NamespacedName: key})

			assert.Zero(t, res)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tt.wantErr(err), "unexpected error %v", err)
				assert.Contains(t, err.Error(), "greet lobby/welcome")
			} else {
				require.NoError(t, err)
			}
			assert.ElementsMatch(t, tt.wantEvents, events.Reasons())
			if tt.existing == nil || tt.failWrite != nil {
				return
			}
			got, err := store.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, got.Status)
			assert.Equal(t, tt.existing.Spec, got.Spec, "spec untouched")
			assert.Equal(t, tt.wantWrite, got.ResourceVersion != before, "written only when the status differs")
		})
	}
}

// A second reconcile of a greeted Greeting is a no-op, and a new name is
// noticed, with the generation it came with.
func TestReconcileIsLevelBased(t *testing.T) {
	t.Parallel()
	ctx, req := context.Background(), ports.Request{NamespacedName: key}
	store := newStore()
	events := memory.NewEventRecorder()
	r, err := greeting.NewReconciler(store, store, events)
	require.NoError(t, err)
	_, err = store.Create(ctx, newGreeting(greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}, greetingv1.GreetingStatus{}))
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	greeted, err := store.Get(ctx, key)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	again, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, greeted.ResourceVersion, again.ResourceVersion, "nothing written the second time")

	again.Spec.Name = "Ada"
	renamed, err := store.Update(ctx, again)
	require.NoError(t, err)
	require.Equal(t, int64(2), renamed.Generation)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	got, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, greetingv1.GreetingStatus{Message: "Hello, Ada!", ObservedGeneration: 2}, got.Status)
	assert.Equal(t, []memory.Event{
		{Kind: "Greeting", Regarding: key, Type: ports.EventTypeNormal, Reason: greeting.ReasonGreeted, Action: "Greet", Note: `Set status.message to "Hello, World!"`},
		{Kind: "Greeting", Regarding: key, Type: ports.EventTypeNormal, Reason: greeting.ReasonGreeted, Action: "Greet", Note: `Set status.message to "Hello, Ada!"`},
	}, events.Events())
}

func TestReconcileReportsReadErrors(t *testing.T) {
	t.Parallel()
	r, err := greeting.NewReconciler(failingReader{errors.New("cache stopped")}, newStore(), memory.NewEventRecorder())
	require.NoError(t, err)

	_, err = r.Reconcile(context.Background(), ports.Request{NamespacedName: key})

	require.Error(t, err)
	assert.Contains(t, err.Error(), "get greeting lobby/welcome: cache stopped")
	assert.False(t, ports.IsTerminal(err))
}

func TestReconcileDoesNotMutateTheCachedObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore()
	created, err := store.Create(ctx, newGreeting(greetingv1.GreetingSpec{Name: "World"}, greetingv1.GreetingStatus{}))
	require.NoError(t, err)
	cached := created.DeepCopy()
	r, err := greeting.NewReconciler(staticReader{cached}, store, memory.NewEventRecorder())
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, ports.Request{NamespacedName: key})

	require.NoError(t, err)
	assert.Equal(t, created, cached, "the cached object is unchanged")
	got, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "Hello, World!", got.Status.Message, "the copy was written")
}

func TestNewReconcilerRequiresEveryPort(t *testing.T) {
	t.Parallel()
	store := newStore()
	for name, build := range map[string]func() (*greeting.Reconciler, error){
		"reader": func() (*greeting.Reconciler, error) {
			return greeting.NewReconciler(nil, store, memory.NewEventRecorder())
		},
		"writer": func() (*greeting.Reconciler, error) {
			return greeting.NewReconciler(store, nil, memory.NewEventRecorder())
		},
		"events": func() (*greeting.Reconciler, error) { return greeting.NewReconciler(store, store, nil) },
	} {
		_, err := build()
		assert.Error(t, err, "without %s", name)
	}
}

// The package keeps to the rule the architecture test applies to
// internal/domain: ports, API types and the standard library only. The
// example's api package is judged as if it lived under api/.
func TestImportsFollowTheDomainRule(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	const module = "github.com/hexagonal-operator/operator"
	imports := make([]string, 0, len(pkg.Imports))
	for _, imp := range pkg.Imports {
		if imp == module+"/examples/greeting/api/v1" {
			imp = module + "/api/greeting/v1"
		}
		imports = append(imports, imp)
	}
	violations := architecture.Check(module, []architecture.Package{
		{ImportPath: module + "/internal/domain/greeting", Imports: imports},
	})
	assert.Empty(t, violations)
	assert.Contains(t, pkg.Imports, module+"/internal/ports")
	assert.Contains(t, pkg.Imports, module+"/examples/greeting/api/v1")
}

type staticReader struct{ g *greetingv1.Greeting }

func (s staticReader) Get(context.Context, types.NamespacedName) (*greetingv1.Greeting, error) {
	return s.g, nil
}

func (s staticReader) List(context.Context, string, ...ports.ListOption) ([]*greetingv1.Greeting, error) {
	return []*greetingv1.Greeting{s.g}, nil
}

type failingReader struct{ err error }

func (f failingReader) Get(context.Context, types.NamespacedName) (*greetingv1.Greeting, error) {
	return nil, f.err
}

func (f failingReader) List(context.Context, string, ...ports.ListOption) ([]*greetingv1.Greeting, error) {
	return nil, f.err
}
