package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

func TestMain(m *testing.M) { operatortest.Main(m) }

// TestGreetingsAreGreeted runs the example's application, the standard
// operator plus the greetings option, against a real API server with the
// example's CRD installed and its two webhooks registered from the running
// operator's own webhook table.
func TestGreetingsAreGreeted(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := t.Context()
	const ns = "lobby"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	_, err := cp.InstallCRDs(ctx, "config/crd", nil)
	require.NoError(t, err)

	// None of the operator's own controllers: only the example's runs.
	cfg := operatortest.Config(t, cp, "--controllers=")
	op := operatortest.Start(t, cfg, greetings)
	hooks := greetingHooks(op.Hooks)
	require.Len(t, hooks, 2, "a mutating and a validating hook for Greetings")
	operatortest.InstallWebhooks(t, cp, cfg, "greeting-example", hooks)

	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	g := greetingClient{dyn.Resource(greetingv1.Resource).Namespace(ns)}
	g.waitForDefaulter(t)

	created, err := g.create(ctx, "world", greetingv1.GreetingSpec{Name: "World"})
	require.NoError(t, err)
	assert.Equal(t, greeting.DefaultSalutation, created.Spec.Salutation, "the defaulter set the salutation")
	g.eventuallyStatus(t, "world", greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1})

	t.Run("the validator refuses a Greeting without a name or with too long a one", func(t *testing.T) {
		for spec, want := range map[greetingv1.GreetingSpec]string{
			{Name: ""}:                      "spec.name is required: say whom to greet",
			{Name: strings.Repeat("n", 64)}: "spec.name has 64 characters, more than 63",
			{Name: "World", Salutation: strings.Repeat("s", 33)}: "spec.salutation has 33 characters, more than 32",
		} {
			_, err := g.create(ctx, "refused", spec)
			require.Error(t, err, "%+v", spec)
			assert.Contains(t, err.Error(), "denied the request: "+want)
		}
		_, err := g.get(ctx, "refused")
		assert.Error(t, err, "nothing was stored")
	})

	t.Run("a new name updates the message and the observed generation", func(t *testing.T) {
		cur, err := g.get(ctx, "world")
		require.NoError(t, err)
		cur.Spec.Name = "Ada"
		updated, err := g.update(ctx, cur)
		require.NoError(t, err)
		assert.Equal(t, int64(2), updated.Generation)
		g.eventuallyStatus(t, "world", greetingv1.GreetingStatus{Message: "Hello, Ada!", ObservedGeneration: 2})
	})

	t.Run("an update that clears the salutation gets the default back", func(t *testing.T) {
		_, err := g.create(ctx, "howdy", greetingv1.GreetingSpec{Name: "Partner", Salutation: "Howdy"})
		require.NoError(t, err)
		g.eventuallyStatus(t, "howdy", greetingv1.GreetingStatus{Message: "Howdy, Partner!", ObservedGeneration: 1})
		cur, err := g.get(ctx, "howdy")
		require.NoError(t, err)
		cur.Spec.Salutation = ""
		updated, err := g.update(ctx, cur)
		require.NoError(t, err)
		assert.Equal(t, "Hello", updated.Spec.Salutation)
		g.eventuallyStatus(t, "howdy", greetingv1.GreetingStatus{Message: "Hello, Partner!", ObservedGeneration: 2})
	})

	t.Run("the Greeting owns a ConfigMap with its message, which comes back when changed or deleted", func(t *testing.T) {
		world, err := g.get(ctx, "world")
		require.NoError(t, err)
		yes := true
		owner := []metav1.OwnerReference{{
			APIVersion: "greetings.example.hexagonal-operator.io/v1", Kind: "Greeting", Name: "world", UID: world.UID,
			Controller: &yes, BlockOwnerDeletion: &yes,
		}}
		cms := cp.Clientset().CoreV1().ConfigMaps(ns)
		eventuallyPublished := func(t *testing.T, message string) {
			t.Helper()
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				cm, err := cms.Get(ctx, "world", metav1.GetOptions{})
				require.NoError(c, err)
				assert.Equal(c, map[string]string{greeting.MessageKey: message}, cm.Data)
				assert.Equal(c, owner, cm.OwnerReferences)
			}, 30*time.Second, 50*time.Millisecond)
		}
		eventuallyPublished(t, "Hello, Ada!")

		cm, err := cms.Get(ctx, "world", metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data[greeting.MessageKey] = "Bye, Ada!"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		eventuallyPublished(t, "Hello, Ada!")

		require.NoError(t, cms.Delete(ctx, "world", metav1.DeleteOptions{}))
		eventuallyPublished(t, "Hello, Ada!")
		again, err := cms.Get(ctx, "world", metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotEqual(t, cm.UID, again.UID, "a new ConfigMap")
	})

	t.Run("each greeting is recorded as an Event", func(t *testing.T) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			events, err := cp.Clientset().EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
			require.NoError(c, err)
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Kind == greetingv1.Kind && e.Regarding.APIVersion == greetingv1.SchemeGroupVersion.String() &&
					e.Regarding.Name == "world" && e.Reason == greeting.ReasonGreeted {
					notes = append(notes, e.Note)
				}
			}
			assert.ElementsMatch(c, []string{
				`Set status.message to "Hello, World!"`,
				`Set status.message to "Hello, Ada!"`,
			}, notes)
		}, 30*time.Second, 100*time.Millisecond)
	})

	assert.Positive(t, op.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "greeting", "result": "success"}))
	assert.Zero(t, op.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "replicaset"}),
		"--controllers= runs none of the operator's own")
}

// greetingHooks are the rows of the operator's webhook table that the
// example added: those for its API group.
func greetingHooks(all []webhook.Hook) []webhook.Hook {
	var out []webhook.Hook
	for _, h := range all {
		if h.Resource.Resource.Group == greetingv1.GroupName {
			out = append(out, h)
		}
	}
	return out
}

// greetingClient reads and writes typed Greetings through the dynamic
// client.
type greetingClient struct{ dynamic.ResourceInterface }

func (g greetingClient) create(ctx context.Context, name string, spec greetingv1.GreetingSpec) (*greetingv1.Greeting, error) {
	return g.createWith(ctx, &greetingv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
}

func (g greetingClient) createWith(ctx context.Context, obj *greetingv1.Greeting, opts metav1.CreateOptions) (*greetingv1.Greeting, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	out, err := g.Create(ctx, u, opts)
	if err != nil {
		return nil, err
	}
	return fromUnstructured(out)
}

func (g greetingClient) get(ctx context.Context, name string) (*greetingv1.Greeting, error) {
	out, err := g.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured(out)
}

func (g greetingClient) update(ctx context.Context, obj *greetingv1.Greeting) (*greetingv1.Greeting, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	out, err := g.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured(out)
}

// waitForDefaulter waits until the API server calls the defaulting
// webhook: it learns about new configurations a moment later.
func (g greetingClient) waitForDefaulter(t *testing.T) {
	t.Helper()
	probe := &greetingv1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: greetingv1.GreetingSpec{Name: "probe"}}
	var last error
	require.Eventually(t, func() bool {
		got, err := g.createWith(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last = err
		return err == nil && got.Spec.Salutation == greeting.DefaultSalutation
	}, 60*time.Second, 50*time.Millisecond, "the API server never called the defaulting webhook (last error: %v)", last)
}

func (g greetingClient) eventuallyStatus(t *testing.T, name string, want greetingv1.GreetingStatus) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got, err := g.get(context.Background(), name)
		require.NoError(c, err)
		assert.Equal(c, want, got.Status)
	}, 30*time.Second, 50*time.Millisecond, "greeting %s", name)
}

func toUnstructured(g *greetingv1.Greeting) (*unstructured.Unstructured, error) {
	g = g.DeepCopy()
	g.APIVersion, g.Kind = greetingv1.SchemeGroupVersion.String(), greetingv1.Kind
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(g)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func fromUnstructured(u *unstructured.Unstructured) (*greetingv1.Greeting, error) {
	var g greetingv1.Greeting
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &g); err != nil {
		return nil, err
	}
	return &g, nil
}
