package admission_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// failingReader is a ChaosPod reader that cannot answer.
type failingReader struct{ err error }

func (f failingReader) Get(context.Context, types.NamespacedName) (*chaosv1.ChaosPod, error) {
	return nil, f.err
}

func (f failingReader) List(context.Context, string, ...ports.ListOption) ([]*chaosv1.ChaosPod, error) {
	return nil, f.err
}

func TestNewOperatorPodValidatorNeedsAReader(t *testing.T) {
	t.Parallel()
	_, err := admission.NewOperatorPodValidator(nil)
	require.Error(t, err)
}

func TestValidateOperatorPod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind)
	create := func(name string, deleting bool) *chaosv1.ChaosPod {
		cp := &chaosv1.ChaosPod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name}}
		if deleting {
			cp.DeletionTimestamp = &metav1.Time{Time: now}
			cp.Finalizers = []string{"example.com/hold"}
		}
		created, err := store.Create(ctx, cp)
		require.NoError(t, err)
		return created
	}
	victim := create("victim", false)
	leaving := create("leaving", true)
	// Deleted a moment ago: the reader answers as the store is now.
	gone := create("gone", false)
	require.NoError(t, store.Delete(ctx, types.NamespacedName{Namespace: "apps", Name: "gone"}, gone.UID))
	// The same name in another namespace is another ChaosPod.
	elsewhere, err := store.Create(ctx, &chaosv1.ChaosPod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "ghost"}})
	require.NoError(t, err)
	v, err := admission.NewOperatorPodValidator(store)
	require.NoError(t, err)

	controller := func(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
	}
	of := func(cp *chaosv1.ChaosPod) metav1.OwnerReference {
		return controller(chaosv1.SchemeGroupVersion.String(), chaosv1.Kind, cp.Name, cp.UID)
	}
	const denied = "the operator may only create Pods of an existing ChaosPod: "
	// Whatever the ChaosPod's state, the client reads the same words.
	const refused = denied + "the Pod's controller must be a ChaosPod of its namespace with the name and UID its owner reference gives, not being deleted"
	tests := []struct {
		name   string
		owners []metav1.OwnerReference
		want   string // the denial; "" = allowed
		reason string // what only the operator's log is told
	}{
		{"an existing ChaosPod's Pod", []metav1.OwnerReference{of(victim)}, "", ""},
		{"the ChaosPod at v2",
			[]metav1.OwnerReference{controller(chaosv1.GroupName+"/v2", chaosv1.Kind, victim.Name, victim.UID)}, "", ""},
		{"a ChaosPod that does not exist",
			[]metav1.OwnerReference{controller("chaosapps.metamagical.io/v1", "ChaosPod", "ghost", "any-uid")},
			refused, "chaospod apps/ghost does not exist"},
		{"a ChaosPod deleted a moment ago", []metav1.OwnerReference{of(gone)},
			refused, "chaospod apps/gone does not exist"},
		{"a ChaosPod of another namespace",
			[]metav1.OwnerReference{controller("chaosapps.metamagical.io/v1", "ChaosPod", "ghost", elsewhere.UID)},
			refused, "chaospod apps/ghost does not exist"},
		{"a wrong UID",
			[]metav1.OwnerReference{controller("chaosapps.metamagical.io/v1", "ChaosPod", victim.Name, "wrong-uid")},
			refused, "chaospod apps/victim has UID " + string(victim.UID) + ", the Pod's owner reference names wrong-uid"},
		{"a ChaosPod being deleted", []metav1.OwnerReference{of(leaving)},
			refused, "chaospod apps/leaving is being deleted"},
		{"no owner", nil, denied + "the Pod has no controller owner reference", ""},
		{"an owner that is not the controller",
			[]metav1.OwnerReference{{APIVersion: "chaosapps.metamagical.io/v1", Kind: "ChaosPod", Name: victim.Name, UID: victim.UID}},
			denied + "the Pod has no controller owner reference", ""},
		{"another kind as controller",
			[]metav1.OwnerReference{controller("apps/v1", "ReplicaSet", "victim", victim.UID)},
			denied + `the Pod's controller is apps/v1 ReplicaSet "victim", not a ChaosPod.chaosapps.metamagical.io`, ""},
		{"the kind in another group",
			[]metav1.OwnerReference{controller("example.com/v1", "ChaosPod", victim.Name, victim.UID)},
			denied + `the Pod's controller is example.com/v1 ChaosPod "victim", not a ChaosPod.chaosapps.metamagical.io`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "victim", OwnerReferences: tt.owners}}

			warnings, err := v.ValidateCreate(ctx, pod)

			assert.Empty(t, warnings)
			assert.Equal(t, tt.want, denial(t, err))
			if tt.reason != "" {
				assert.Contains(t, err.Error(), tt.reason, "the error names the reason, for the operator's log")
			}
			// Registered for creates only, it admits anything else.
			_, err = v.ValidateUpdate(ctx, pod, pod)
			require.NoError(t, err)
			_, err = v.ValidateDelete(ctx, pod)
			require.NoError(t, err)
		})
	}
}

// The Pod's namespace is the request's when the object leaves it out.
func TestValidateOperatorPodReadsTheRequestsNamespace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind)
	cp, err := store.Create(ctx, &chaosv1.ChaosPod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "victim"}})
	require.NoError(t, err)
	v, err := admission.NewOperatorPodValidator(store)
	require.NoError(t, err)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "victim", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "chaosapps.metamagical.io/v1", Kind: "ChaosPod", Name: "victim", UID: cp.UID, Controller: ptr.To(true)}}}}
	ctx = ports.NewContextWithAdmissionRequest(ctx, ports.AdmissionRequest{Operation: ports.OperationCreate, Namespace: "apps"})
	_, err = v.ValidateCreate(ctx, pod)
	require.NoError(t, err)

	_, err = v.ValidateCreate(context.Background(), pod)
	require.Error(t, err, "without the request, no namespace")
	assert.Contains(t, err.Error(), "chaospod /victim does not exist")
}

// A reader that cannot answer is no verdict: the webhook fails, and the
// API server refuses the Pod (failurePolicy Fail).
func TestValidateOperatorPodCannotDecideWithoutTheReader(t *testing.T) {
	t.Parallel()
	boom := errors.New("cache not synced")
	v, err := admission.NewOperatorPodValidator(failingReader{err: boom})
	require.NoError(t, err)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "victim", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "chaosapps.metamagical.io/v1", Kind: "ChaosPod", Name: "victim", UID: "u", Controller: ptr.To(true)}}}}
	_, err = v.ValidateCreate(context.Background(), pod)
	require.ErrorIs(t, err, boom)
	var d *ports.DeniedError
	assert.False(t, errors.As(err, &d), "not a refusal")
}
