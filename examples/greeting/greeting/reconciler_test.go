package greeting_test

import (
	"context"
	"errors"
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

func newConfigMaps() *memory.Store[*corev1.ConfigMap] {
	return memory.NewStore[*corev1.ConfigMap](schema.GroupKind{Kind: "ConfigMap"})
}

// ownedBy is the owner reference the Greeting g's ConfigMap must carry,
// written out by hand.
func ownedBy(g *greetingv1.Greeting) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{
		APIVersion:         "greetings.example.hexagonal-operator.io/v1",
		Kind:               "Greeting",
		Name:               g.Name,
		UID:                g.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}}
}

// newConfigMap is a ConfigMap named like the Greeting, with owners.
func newConfigMap(data map[string]string, owners []metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, OwnerReferences: owners},
		Data:       data,
	}
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
			cms := newConfigMaps()
			r, err := greeting.NewReconciler(store, store, cms, cms, events)
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
			cm, err := cms.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{greeting.MessageKey: tt.wantStatus.Message}, cm.Data)
		})
	}
}

// The Greeting's ConfigMap holds its message and names the Greeting as its
// controller; one the Greeting does not control is left alone.
func TestReconcileOwnsAConfigMap(t *testing.T) {
	t.Parallel()
	world := greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}
	yes := true
	other := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "someone", UID: "pod-uid", Controller: &yes}}
	tests := []struct {
		name string
		// existing is the ConfigMap before; ownedBy is set to the
		// Greeting's reference when ownedByGreeting.
		existing        *corev1.ConfigMap
		ownedByGreeting bool
		failWrite       error
		wantData        map[string]string
		wantForeign     bool // the owners stay those of existing
		wantWrite       bool
		wantErr         func(error) bool
		wantStatus      bool // the status is written
	}{
		{
			name:       "a missing ConfigMap is created",
			wantData:   map[string]string{greeting.MessageKey: "Hello, World!"},
			wantWrite:  true,
			wantStatus: true,
		},
		{
			name:            "a stale message is replaced, other keys kept",
			existing:        newConfigMap(map[string]string{greeting.MessageKey: "Hi, World!", "note": "mine"}, nil),
			ownedByGreeting: true,
			wantData:        map[string]string{greeting.MessageKey: "Hello, World!", "note": "mine"},
			wantWrite:       true,
			wantStatus:      true,
		},
		{
			name:            "a ConfigMap without data gets the message",
			existing:        newConfigMap(nil, nil),
			ownedByGreeting: true,
			wantData:        map[string]string{greeting.MessageKey: "Hello, World!"},
			wantWrite:       true,
			wantStatus:      true,
		},
		{
			name:            "an up-to-date ConfigMap is not written",
			existing:        newConfigMap(map[string]string{greeting.MessageKey: "Hello, World!"}, nil),
			ownedByGreeting: true,
			wantData:        map[string]string{greeting.MessageKey: "Hello, World!"},
			wantStatus:      true,
		},
		{
			name:        "a ConfigMap controlled by another is left alone",
			existing:    newConfigMap(map[string]string{"x": "y"}, other),
			wantData:    map[string]string{"x": "y"},
			wantForeign: true,
			wantErr: func(err error) bool {
				return ports.IsTerminal(err) && strings.Contains(err.Error(), "not controlled by it")
			},
		},
		{
			name:        "a ConfigMap without owner is left alone",
			existing:    newConfigMap(map[string]string{"x": "y"}, nil),
			wantData:    map[string]string{"x": "y"},
			wantForeign: true,
			wantErr:     ports.IsTerminal,
		},
		{
			name:      "created meanwhile is retried",
			failWrite: ports.ErrAlreadyExists,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrAlreadyExists) && !ports.IsTerminal(err) },
		},
		{
			name:            "a conflict is retried",
			existing:        newConfigMap(map[string]string{greeting.MessageKey: "Hi, World!"}, nil),
			ownedByGreeting: true,
			failWrite:       ports.ErrConflict,
			wantData:        map[string]string{greeting.MessageKey: "Hi, World!"},
			wantErr:         func(err error) bool { return errors.Is(err, ports.ErrConflict) && !ports.IsTerminal(err) },
		},
		{
			name:      "an invalid write is terminal",
			failWrite: ports.ErrInvalid,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrInvalid) && ports.IsTerminal(err) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, cms := newStore(), newConfigMaps()
			g, err := store.Create(ctx, newGreeting(world, greetingv1.GreetingStatus{}))
			require.NoError(t, err)
			var before *corev1.ConfigMap
			if tt.existing != nil {
				existing := tt.existing.DeepCopy()
				if tt.ownedByGreeting {
					existing.OwnerReferences = ownedBy(g)
				}
				before, err = cms.Create(ctx, existing)
				require.NoError(t, err)
			}
			if tt.failWrite != nil {
				cms.FailNextWrites(tt.failWrite)
			}
			r, err := greeting.NewReconciler(store, store, cms, cms, memory.NewEventRecorder())
			require.NoError(t, err)

			_, err = r.Reconcile(ctx, ports.Request{NamespacedName: key})

			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tt.wantErr(err), "unexpected error %v", err)
				assert.Contains(t, err.Error(), "publish greeting lobby/welcome")
			} else {
				require.NoError(t, err)
			}
			greeted, err := store.Get(ctx, key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, greeted.Status.Message != "", "the status is written after the ConfigMap only")
			cm, err := cms.Get(ctx, key)
			if tt.wantData == nil {
				assert.ErrorIs(t, err, ports.ErrNotFound, "nothing was created")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantData, cm.Data)
			if tt.wantForeign {
				assert.Equal(t, tt.existing.OwnerReferences, cm.OwnerReferences)
			} else {
				assert.Equal(t, ownedBy(g), cm.OwnerReferences)
			}
			assert.Equal(t, tt.wantWrite, before == nil || cm.ResourceVersion != before.ResourceVersion, "written only when the message differs")
		})
	}
}

// A second reconcile of a greeted Greeting is a no-op, and a new name is
// noticed, with the generation it came with.
func TestReconcileIsLevelBased(t *testing.T) {
	t.Parallel()
	ctx, req := context.Background(), ports.Request{NamespacedName: key}
	store, cms := newStore(), newConfigMaps()
	events := memory.NewEventRecorder()
	r, err := greeting.NewReconciler(store, store, cms, cms, events)
	require.NoError(t, err)
	_, err = store.Create(ctx, newGreeting(greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}, greetingv1.GreetingStatus{}))
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	greeted, err := store.Get(ctx, key)
	require.NoError(t, err)
	published, err := cms.Get(ctx, key)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	again, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, greeted.ResourceVersion, again.ResourceVersion, "nothing written the second time")
	cm, err := cms.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, published.ResourceVersion, cm.ResourceVersion, "nor to the ConfigMap")

	again.Spec.Name = "Ada"
	renamed, err := store.Update(ctx, again)
	require.NoError(t, err)
	require.Equal(t, int64(2), renamed.Generation)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	got, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, greetingv1.GreetingStatus{Message: "Hello, Ada!", ObservedGeneration: 2}, got.Status)
	cm, err = cms.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{greeting.MessageKey: "Hello, Ada!"}, cm.Data)
	assert.Equal(t, []memory.Event{
		{Kind: "Greeting", Regarding: key, Type: ports.EventTypeNormal, Reason: greeting.ReasonGreeted, Action: "Greet", Note: `Set status.message to "Hello, World!"`},
		{Kind: "Greeting", Regarding: key, Type: ports.EventTypeNormal, Reason: greeting.ReasonGreeted, Action: "Greet", Note: `Set status.message to "Hello, Ada!"`},
	}, events.Events())
}

func TestReconcileReportsReadErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	greetings := newStore()
	_, err := greetings.Create(ctx, newGreeting(greetingv1.GreetingSpec{Name: "World"}, greetingv1.GreetingStatus{}))
	require.NoError(t, err)
	cms := newConfigMaps()
	stopped := errors.New("cache stopped")
	tests := []struct {
		name string
		r    func() (*greeting.Reconciler, error)
		want string
	}{
		{
			name: "of the Greeting",
			r: func() (*greeting.Reconciler, error) {
				return greeting.NewReconciler(failingReader[*greetingv1.Greeting]{stopped}, greetings, cms, cms, memory.NewEventRecorder())
			},
			want: "get greeting lobby/welcome: cache stopped",
		},
		{
			name: "of its ConfigMap",
			r: func() (*greeting.Reconciler, error) {
				return greeting.NewReconciler(greetings, greetings, failingReader[*corev1.ConfigMap]{stopped}, cms, memory.NewEventRecorder())
			},
			want: "get configmap lobby/welcome: cache stopped",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := tt.r()
			require.NoError(t, err)

			_, err = r.Reconcile(ctx, ports.Request{NamespacedName: key})

			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.False(t, ports.IsTerminal(err))
		})
	}
}

func TestReconcileDoesNotMutateTheCachedObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, cms := newStore(), newConfigMaps()
	created, err := store.Create(ctx, newGreeting(greetingv1.GreetingSpec{Name: "World"}, greetingv1.GreetingStatus{}))
	require.NoError(t, err)
	cm, err := cms.Create(ctx, newConfigMap(map[string]string{greeting.MessageKey: "Hi, World!"}, ownedBy(created)))
	require.NoError(t, err)
	cachedGreeting, cachedConfigMap := created.DeepCopy(), cm.DeepCopy()
	r, err := greeting.NewReconciler(staticReader[*greetingv1.Greeting]{cachedGreeting}, store,
		staticReader[*corev1.ConfigMap]{cachedConfigMap}, cms, memory.NewEventRecorder())
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, ports.Request{NamespacedName: key})

	require.NoError(t, err)
	assert.Equal(t, created, cachedGreeting, "the cached Greeting is unchanged")
	assert.Equal(t, cm, cachedConfigMap, "the cached ConfigMap is unchanged")
	got, err := store.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "Hello, World!", got.Status.Message, "the copy was written")
	gotCM, err := cms.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "Hello, World!", gotCM.Data[greeting.MessageKey], "the copy was written")
}

func TestNewReconcilerRequiresEveryPort(t *testing.T) {
	t.Parallel()
	store, cms, events := newStore(), newConfigMaps(), memory.NewEventRecorder()
	for name, build := range map[string]func() (*greeting.Reconciler, error){
		"reader":           func() (*greeting.Reconciler, error) { return greeting.NewReconciler(nil, store, cms, cms, events) },
		"writer":           func() (*greeting.Reconciler, error) { return greeting.NewReconciler(store, nil, cms, cms, events) },
		"configmap reader": func() (*greeting.Reconciler, error) { return greeting.NewReconciler(store, store, nil, cms, events) },
		"configmap writer": func() (*greeting.Reconciler, error) { return greeting.NewReconciler(store, store, cms, nil, events) },
		"events":           func() (*greeting.Reconciler, error) { return greeting.NewReconciler(store, store, cms, cms, nil) },
	} {
		_, err := build()
		assert.Error(t, err, "without %s", name)
	}
	_, err := greeting.NewReconciler(store, store, cms, cms, events)
	assert.NoError(t, err)
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

type staticReader[T any] struct{ obj T }

func (s staticReader[T]) Get(context.Context, types.NamespacedName) (T, error) { return s.obj, nil }

func (s staticReader[T]) List(context.Context, string, ...ports.ListOption) ([]T, error) {
	return []T{s.obj}, nil
}

type failingReader[T any] struct{ err error }

func (f failingReader[T]) Get(context.Context, types.NamespacedName) (T, error) {
	var zero T
	return zero, f.err
}

func (f failingReader[T]) List(context.Context, string, ...ports.ListOption) ([]T, error) {
	return nil, f.err
}
