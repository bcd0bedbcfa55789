package cache

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/kubeclient/kubeclienttest"
)

type recorded struct{ adds, updates, deletes []metav1.Object }

func (r *recorded) OnAdd(o metav1.Object)       { r.adds = append(r.adds, o) }
func (r *recorded) OnUpdate(_, n metav1.Object) { r.updates = append(r.updates, n) }
func (r *recorded) OnDelete(o metav1.Object)    { r.deletes = append(r.deletes, o) }

func TestEventHandlerUnwrapsTombstones(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}}
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-1"}}
	tests := []struct {
		name string
		obj  any
		want metav1.Object // nil: nothing delivered
	}{
		{"object", rs, rs},
		{"tombstone of a typed object", toolscache.DeletedFinalStateUnknown{Key: "apps/web", Obj: rs}, rs},
		{"tombstone of metadata", toolscache.DeletedFinalStateUnknown{Key: "apps/web-1", Obj: pod}, pod},
		{"tombstone of something else", toolscache.DeletedFinalStateUnknown{Key: "apps/x", Obj: "not an object"}, nil},
		{"not an object", 42, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorded{}
			eventHandler{h: rec}.OnDelete(tt.obj)
			if tt.want == nil {
				assert.Empty(t, rec.deletes)
				return
			}
			require.Len(t, rec.deletes, 1)
			assert.Same(t, tt.want, rec.deletes[0])
		})
	}
}

func TestEventHandlerPassesObjects(t *testing.T) {
	t.Parallel()
	old := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "old"}}
	cur := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "new"}}
	rec := &recorded{}
	h := eventHandler{h: rec}

	h.OnAdd(cur, true)
	h.OnAdd("not an object", false)
	h.OnUpdate(old, cur)
	h.OnUpdate(old, "not an object")

	assert.Equal(t, []metav1.Object{cur}, rec.adds)
	assert.Equal(t, []metav1.Object{cur}, rec.updates)
}

func TestIndexByControllerOwner(t *testing.T) {
	t.Parallel()
	owner := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(controller)}
	}
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want []string
	}{
		{"replicaset controller", []metav1.OwnerReference{owner("apps/v1", "ReplicaSet", "web", true)}, []string{"apps/ReplicaSet/apps/web"}},
		{"core group", []metav1.OwnerReference{owner("v1", "ReplicationController", "old", true)}, []string{"/ReplicationController/apps/old"}},
		{"custom resource, any version", []metav1.OwnerReference{owner("chaosapps.metamagical.io/v2", "ChaosPod", "chaos", true)}, []string{"chaosapps.metamagical.io/ChaosPod/apps/chaos"}},
		{"only the controller counts", []metav1.OwnerReference{owner("v1", "ConfigMap", "cm", false), owner("apps/v1", "ReplicaSet", "web", true)}, []string{"apps/ReplicaSet/apps/web"}},
		{"owners that do not control", []metav1.OwnerReference{owner("apps/v1", "ReplicaSet", "web", false)}, nil},
		{"no owners", nil, nil},
		{"unparsable apiVersion", []metav1.OwnerReference{owner("a/b/c", "X", "x", true)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "p", OwnerReferences: tt.refs}}
			got, err := indexByControllerOwner(pod)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	got, err := indexByControllerOwner("not an object")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestControllerOwnerKeyMatchesTheIndex(t *testing.T) {
	t.Parallel()
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "p",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}}}}
	got, err := indexByControllerOwner(pod)
	require.NoError(t, err)
	assert.Equal(t, []string{ControllerOwnerKey(schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, types.NamespacedName{Namespace: "apps", Name: "web"})}, got)
}

func TestStripManagedFields(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}

	out, err := stripManagedFields(rs)
	require.NoError(t, err)
	assert.Nil(t, out.(*appsv1.ReplicaSet).ManagedFields)
	assert.Equal(t, map[string]string{"a": "b"}, out.(*appsv1.ReplicaSet).Labels)

	again, err := stripManagedFields(out)
	require.NoError(t, err)
	assert.Same(t, rs, again, "idempotent, in place")

	tombstone := toolscache.DeletedFinalStateUnknown{Key: "k", Obj: rs}
	passed, err := stripManagedFields(tombstone)
	require.NoError(t, err)
	assert.Equal(t, tombstone, passed)
}

// A resource reads the same on a fake as on a server: each kind with a
// typed client is the one the REST clients would list for its resource,
// under the same scope.
func TestTypedKindsAgreeWithTheRESTClients(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, typedKinds)
	for gvr, k := range typedKinds {
		t.Run(gvr.String(), func(t *testing.T) {
			t.Parallel()
			gvk := gvr.GroupVersion().WithKind(k.typ.Elem().Name())
			gvks, _, err := kubeclient.Scheme.ObjectKinds(reflect.New(k.typ.Elem()).Interface().(runtime.Object))
			require.NoError(t, err)
			assert.Contains(t, gvks, gvk)
			plural, _ := meta.UnsafeGuessKindToResource(gvk)
			assert.Equal(t, gvr.Resource, plural.Resource)
			assert.True(t, kubeclient.Scheme.Recognizes(gvr.GroupVersion().WithKind(gvk.Kind+"List")))

			cs := fake.NewClientset()
			_, err = k.listWatch(kubeclienttest.Wrap(cs), "shop").ListWithContext(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, cs.Actions(), 1)
			want := "shop"
			if clusterScoped[gvk.GroupKind()] {
				want = ""
			}
			assert.Equal(t, want, cs.Actions()[0].GetNamespace(), "the namespace of the list")
		})
	}
}
