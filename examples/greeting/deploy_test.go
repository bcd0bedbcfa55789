package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// TestGreetingsAsDeployed runs the example as its config deploys it: as
// the ServiceAccount its generated roles are bound to, with nothing but
// those roles, and with its generated webhook configurations registered,
// where TestGreetingsAreGreeted registers the running webhook table. The
// API server enforces OwnerReferencesPermissionEnforcement, as hardened
// clusters do, so creating a Greeting's ConfigMap needs the generated
// greetings/finalizers rule too.
func TestGreetingsAsDeployed(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{
		AuditPolicy:    controlplane.DefaultAuditPolicy,
		APIServerFlags: []string{"--enable-admission-plugins=OwnerReferencesPermissionEnforcement"},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const ns = "lobby"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	// The Greeting CRD alone: InstallCRDs reads the folder's own files,
	// not config/crd/patches, whose ChaosPod conversion patch has no CRD
	// to patch here (the operator's own controllers are off).
	_, err := cp.InstallCRDs(ctx, "config/crd", nil)
	require.NoError(t, err)

	d := operatortest.Deploy(t, cp, "config", greetings, "--controllers=")

	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	g := greetingClient{dyn.Resource(greetingv1.Resource).Namespace(ns)}
	g.waitForDefaulter(t)

	t.Run("a Greeting is defaulted, then greeted", func(t *testing.T) {
		created, err := g.create(ctx, "world", greetingv1.GreetingSpec{Name: "World"})
		require.NoError(t, err)
		assert.Equal(t, greeting.DefaultSalutation, created.Spec.Salutation, "the defaulter set the salutation")
		g.eventuallyStatus(t, "world", greetingv1.GreetingStatus{Message: "Hello, World!", ObservedGeneration: 1})
		yes := true
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			cm, err := cp.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, "world", metav1.GetOptions{})
			require.NoError(c, err)
			assert.Equal(c, map[string]string{greeting.MessageKey: "Hello, World!"}, cm.Data)
			assert.Equal(c, []metav1.OwnerReference{{
				APIVersion: "greetings.example.hexagonal-operator.io/v1", Kind: "Greeting", Name: "world", UID: created.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}}, cm.OwnerReferences)
		}, 30*time.Second, 50*time.Millisecond, "the Greeting's ConfigMap")
	})

	t.Run("the validator refuses a Greeting without a name", func(t *testing.T) {
		_, err := g.create(ctx, "nobody", greetingv1.GreetingSpec{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "denied the request: spec.name is required: say whom to greet")
	})

	t.Run("the ServiceAccount did all of it and was refused nothing", func(t *testing.T) {
		// The log is written asynchronously, the Events too: wait for
		// each kind of request the example makes.
		var requests []controlplane.AuditEvent
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			requests, err = d.Requests()
			require.NoError(c, err)
			for _, want := range []struct{ verb, resource, subresource string }{
				{"watch", "greetings", ""}, {"update", "greetings", "status"},
				{"watch", "configmaps", ""}, {"create", "configmaps", ""}, {"create", "events", ""},
			} {
				assert.True(c, slices.ContainsFunc(requests, func(e controlplane.AuditEvent) bool {
					return e.Verb == want.verb && e.ObjectRef != nil && e.ObjectRef.Resource == want.resource && e.ObjectRef.Subresource == want.subresource
				}), "the ServiceAccount made a %s of %s %s", want.verb, want.resource, want.subresource)
			}
		}, 10*time.Second, 100*time.Millisecond, "the audit log has the example's requests")
		for _, e := range requests {
			assert.False(t, e.ForbiddenByAuthorizer(), "forbidden: %s %s", e.Verb, e.RequestURI)
		}
	})

	assert.Positive(t, d.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "greeting", "result": "success"}))
}
