package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

const (
	leasePolicy  = "hexagonal-operator-leader-lease"
	eventsPolicy = "hexagonal-operator-events"
	// leaseName is the Lease config/default names.
	leaseName = "hexagonal-operator-leader"
	// byAPIServer marks a write the API server's own validation refuses
	// before any policy sees it (the policy refuses it too).
	byAPIServer = "the API server"
)

// The leader Lease and the Events, written with the operator's token:
// what client-go's leader election and event recorder write passes, and
// each way to abuse the writes RBAC grants is refused, naming the policy.
// (The operator's own Leases and Events under the policies are
// TestRBACIsExactlyWhatTheOperatorUses'.)
func TestOperatorLeaseAndEventsAreConfinedByTheirPolicies(t *testing.T) {
	t.Parallel()
	// Coordinated leader election on, so that a Lease may carry a strategy
	// and a preferred holder (the API server drops them otherwise).
	cp := controlplane.StartT(t, controlplane.Options{APIServerFlags: []string{
		"--feature-gates=CoordinatedLeaderElection=true", "--runtime-config=coordination.k8s.io/v1beta1=true",
	}})
	ctx := context.Background()
	admin := cp.Clientset()
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	const ns = "apps"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	web, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(ns, "web"), metav1.CreateOptions{})
	require.NoError(t, err)
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	dryRun := []string{metav1.DryRunAll}
	leases := operator.CoordinationV1().Leases(operatorNamespace)

	// A Lease and an Event as client-go writes them.
	identity := func(host string) string { return host + "_" + string(uuid.NewUUID()) }
	lease := func(name string) *coordinationv1.Lease {
		now := metav1.NowMicro()
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(identity("replica-1")), LeaseDurationSeconds: ptr.To[int32](15),
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0),
			},
		}
	}
	createLease := func(change func(l *coordinationv1.Lease)) func() error {
		return func() error {
			l := lease(leaseName)
			change(l)
			_, err := leases.Create(ctx, l, metav1.CreateOptions{DryRun: dryRun})
			return err
		}
	}
	updateLease := func(change func(l *coordinationv1.Lease)) func() error {
		return func() error {
			l, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
			require.NoError(t, err)
			now := metav1.NowMicro()
			l.Spec.RenewTime = &now
			change(l)
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}
	}
	event := func(namespace string) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s.%x", web.Name, time.Now().UnixNano())},
			EventTime:  metav1.NowMicro(),
			Regarding: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: web.Namespace, Name: web.Name,
				UID: web.UID, ResourceVersion: web.ResourceVersion},
			ReportingController: "hexagonal-operator", ReportingInstance: "hexagonal-operator-replica-1",
			Reason: "Labeled", Action: "Label", Type: corev1.EventTypeNormal, Note: "Set label hello=world",
		}
	}
	createEvent := func(change func(e *eventsv1.Event)) func() error {
		return func() error {
			e := event(ns)
			change(e)
			_, err := operator.EventsV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{DryRun: dryRun})
			return err
		}
	}
	// The API server loads new policies a moment after they are created.
	require.Eventually(t, func() bool {
		_, errLease := leases.Create(ctx, lease("probe"), metav1.CreateOptions{DryRun: dryRun})
		e := event(ns)
		e.Finalizers = []string{"e2e.example/hold"}
		_, errEvent := operator.EventsV1().Events(ns).Create(ctx, e, metav1.CreateOptions{DryRun: dryRun})
		return errLease != nil && strings.Contains(errLease.Error(), leasePolicy) &&
			errEvent != nil && strings.Contains(errEvent.Error(), eventsPolicy)
	}, 30*time.Second, 100*time.Millisecond, "the policies are in force")

	// The operator's own Event, and another controller's, to patch.
	recorded, err := operator.EventsV1().Events(ns).Create(ctx, event(ns), metav1.CreateOptions{})
	require.NoError(t, err, "the operator records its Event")
	foreign := event(ns)
	foreign.ReportingController, foreign.ReportingInstance = "kubelet", "kubelet-node-1"
	foreign, err = admin.EventsV1().Events(ns).Create(ctx, foreign, metav1.CreateOptions{})
	require.NoError(t, err)
	patchEvent := func(e *eventsv1.Event, patch string) func() error {
		return func() error {
			_, err := operator.EventsV1().Events(ns).Patch(ctx, e.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{DryRun: dryRun})
			return err
		}
	}
	series := func(count int) string {
		return fmt.Sprintf(`{"series":{"count":%d,"lastObservedTime":%q}}`, count, time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"))
	}
	owner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: "any"}}
	big := strings.Repeat("x", 64<<10)

	tests := []struct {
		name   string
		write  func() error
		policy string // "" when the write is the operator's job and allowed
	}{
		// The Lease, created for real first: the updates need it.
		{"create its Lease as leader election does", func() error {
			_, err := leases.Create(ctx, lease(leaseName), metav1.CreateOptions{})
			return err
		}, ""},
		{"create another Lease", func() error {
			_, err := leases.Create(ctx, lease("stolen"), metav1.CreateOptions{DryRun: dryRun})
			return err
		}, leasePolicy},
		{"create its Lease held forever", createLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](2147483647) }), leasePolicy},
		{"create its Lease released", createLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = ptr.To(""), ptr.To[int32](1)
		}), leasePolicy},
		{"create its Lease labeled", createLease(func(l *coordinationv1.Lease) { l.Labels = map[string]string{"x": "y"} }), leasePolicy},
		{"create its Lease with a finalizer", createLease(func(l *coordinationv1.Lease) { l.Finalizers = []string{"e2e.example/hold"} }), leasePolicy},
		{"renew its Lease", updateLease(func(*coordinationv1.Lease) {}), ""},
		{"take its Lease over", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity = ptr.To(identity("replica-2"))
			l.Spec.LeaseTransitions = ptr.To(*l.Spec.LeaseTransitions + 1)
		}), ""},
		{"release its Lease", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = ptr.To(""), ptr.To[int32](1)
		}), ""},
		{"hold its Lease forever", updateLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](2147483647) }), leasePolicy},
		{"hold its Lease for longer", updateLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](16) }), leasePolicy},
		{"hold its Lease for a second", updateLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](1) }), leasePolicy},
		{"hold its Lease with no duration", updateLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = nil }), leasePolicy},
		{"leave its Lease without a holder, forever", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = ptr.To(""), ptr.To[int32](2147483647)
		}), leasePolicy},
		{"leave its Lease without a holder or a duration", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = nil, nil
		}), leasePolicy},
		{"hold its Lease as a name of another shape", updateLease(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("attacker") }), leasePolicy},
		{"hold its Lease as a 64 KiB name", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity = ptr.To(identity(big))
		}), leasePolicy},
		{"jump its Lease's transitions", updateLease(func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = ptr.To[int32](1000) }), leasePolicy},
		{"drop its Lease's renew time", updateLease(func(l *coordinationv1.Lease) { l.Spec.RenewTime = nil }), leasePolicy},
		{"give its Lease a strategy", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To(coordinationv1.OldestEmulationVersion)
		}), leasePolicy},
		{"name a preferred holder of its Lease", updateLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy, l.Spec.PreferredHolder = ptr.To(coordinationv1.OldestEmulationVersion), ptr.To(identity("replica-2"))
		}), leasePolicy},
		{"annotate its Lease", updateLease(func(l *coordinationv1.Lease) { l.Annotations = map[string]string{"x": big} }), leasePolicy},
		{"give its Lease an owner", updateLease(func(l *coordinationv1.Lease) { l.OwnerReferences = owner }), leasePolicy},
		{"give its Lease a finalizer", updateLease(func(l *coordinationv1.Lease) { l.Finalizers = []string{"e2e.example/hold"} }), leasePolicy},

		// Events.
		{"record an Event as the recorder does", createEvent(func(*eventsv1.Event) {}), ""},
		{"record a Warning the chaospod controller records", createEvent(func(e *eventsv1.Event) {
			e.Regarding = corev1.ObjectReference{APIVersion: "chaosapps.metamagical.io/v1", Kind: "ChaosPod", Namespace: ns, Name: "web", UID: web.UID, ResourceVersion: "1"}
			e.Reason, e.Action, e.Type = "PodCreateFailed", "Create", corev1.EventTypeWarning
		}), ""},
		{"record an Event with a finalizer", createEvent(func(e *eventsv1.Event) { e.Finalizers = []string{"e2e.example/hold"} }), eventsPolicy},
		{"record an Event with an owner", createEvent(func(e *eventsv1.Event) { e.OwnerReferences = owner }), eventsPolicy},
		{"record an Event with a 64 KiB annotation", createEvent(func(e *eventsv1.Event) { e.Annotations = map[string]string{"x": big} }), eventsPolicy},
		{"record a labeled Event", createEvent(func(e *eventsv1.Event) { e.Labels = map[string]string{"x": "y"} }), eventsPolicy},
		{"record an Event about a Secret", createEvent(func(e *eventsv1.Event) {
			e.Regarding.APIVersion, e.Regarding.Kind = "v1", "Secret"
		}), eventsPolicy},
		{"record an Event about a Pod", createEvent(func(e *eventsv1.Event) {
			e.Regarding.APIVersion, e.Regarding.Kind = "v1", "Pod"
		}), eventsPolicy},
		{"record an Event in a namespace its object is not in", func() error {
			// The API server itself refuses another namespace than the
			// object's, but takes an object of no namespace in "default".
			e := event(metav1.NamespaceDefault)
			e.Regarding.Namespace = ""
			_, err := operator.EventsV1().Events(metav1.NamespaceDefault).Create(ctx, e, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, eventsPolicy},
		{"record a reason the operator does not", createEvent(func(e *eventsv1.Event) { e.Reason = "Killing" }), eventsPolicy},
		{"record its reason as a Warning", createEvent(func(e *eventsv1.Event) { e.Type = corev1.EventTypeWarning }), eventsPolicy},
		{"record an Event as another controller", createEvent(func(e *eventsv1.Event) {
			e.ReportingController, e.ReportingInstance = "kubelet", "kubelet-node-1"
		}), eventsPolicy},
		{"record an Event with a 64 KiB field path", createEvent(func(e *eventsv1.Event) { e.Regarding.FieldPath = big }), eventsPolicy},
		{"record an Event with a related object", createEvent(func(e *eventsv1.Event) {
			e.Related = &corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "x"}
		}), eventsPolicy},
		{"record an Event named otherwise", createEvent(func(e *eventsv1.Event) { e.Name = "web-" + big[:200] }), eventsPolicy},
		{"patch its Event into a series", patchEvent(recorded, series(2)), ""},
		{"patch another controller's Event", patchEvent(foreign, series(2)), eventsPolicy},
		{"rewrite its Event's note", patchEvent(recorded, `{"note":"something else"}`), byAPIServer},
		{"count its Event's series down", patchEvent(recorded, series(1)), byAPIServer},
		{"give its Event a finalizer", patchEvent(recorded, `{"metadata":{"finalizers":["e2e.example/hold"]}}`), eventsPolicy},
		{"annotate its Event", patchEvent(recorded, `{"metadata":{"annotations":{"x":"y"}}}`), eventsPolicy},
	}
	for _, tt := range tests { // in order: the Lease is created first
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write()
			if tt.policy == "" {
				require.NoError(t, err, "the operator's job")
				return
			}
			require.Error(t, err)
			t.Logf("denied: %.300s", err)
			if tt.policy == byAPIServer {
				assert.True(t, apierrors.IsInvalid(err), "%v", err)
				return
			}
			requireDenied(t, err, tt.policy, "")
		})
	}

	// The same writes by someone else are not the policies' business.
	l, err := admin.CoordinationV1().Leases(operatorNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	require.NoError(t, err)
	l.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
	_, err = admin.CoordinationV1().Leases(operatorNamespace).Update(ctx, l, metav1.UpdateOptions{DryRun: dryRun})
	require.NoError(t, err, "the policies apply to the operator only")
}
