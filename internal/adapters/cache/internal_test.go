package cache

import (
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestTransformStripsManagedFields(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		c := &Cache{strip: !keep, interner: newInterner()}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}

		out, err := c.transform(rs)
		require.NoError(t, err)
		if keep {
			assert.Len(t, out.(*appsv1.ReplicaSet).ManagedFields, 1)
		} else {
			assert.Nil(t, out.(*appsv1.ReplicaSet).ManagedFields)
		}
		assert.Equal(t, map[string]string{"a": "b"}, out.(*appsv1.ReplicaSet).Labels)

		again, err := c.transform(out)
		require.NoError(t, err)
		assert.Same(t, rs, again, "idempotent, in place")
	}

	c := &Cache{strip: true, interner: newInterner()}
	tombstone := toolscache.DeletedFinalStateUnknown{Key: "k", Obj: &appsv1.ReplicaSet{}}
	passed, err := c.transform(tombstone)
	require.NoError(t, err)
	assert.Equal(t, tombstone, passed)
}

func TestTransformSharesEqualMetadata(t *testing.T) {
	t.Parallel()
	c := &Cache{strip: true, interner: newInterner()}
	pod := func(name, owner string, labels map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:   string([]byte("apps")), // a distinct copy, as a decoder makes
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{"example-mutating-admission-webhook": "foo"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner,
				UID: types.UID("uid-" + owner), Controller: ptr.To(true)}},
		}}
	}
	a := pod("web-1", "web", map[string]string{"app": "web", "tier": "front"})
	b := pod("web-2", "web", map[string]string{"tier": "front", "app": "web"})
	other := pod("db-1", "db", map[string]string{"app": "db"})
	for _, p := range []*metav1.PartialObjectMetadata{a, b, other} {
		_, err := c.transform(p)
		require.NoError(t, err)
	}

	same := func(x, y any) bool { return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() }
	assert.True(t, same(a.Labels, b.Labels), "equal labels are one map")
	assert.True(t, same(a.Annotations, other.Annotations), "equal annotations are one map")
	assert.True(t, same(a.OwnerReferences, b.OwnerReferences), "equal owner references are one slice")
	assert.Equal(t, unsafe.StringData(a.Namespace), unsafe.StringData(other.Namespace), "one namespace string")

	assert.False(t, same(a.Labels, other.Labels))
	assert.False(t, same(a.OwnerReferences, other.OwnerReferences))
	assert.Equal(t, map[string]string{"app": "db"}, other.Labels)
	assert.Equal(t, "db", other.OwnerReferences[0].Name)
	assert.Equal(t, map[string]string{"app": "web", "tier": "front"}, b.Labels, "values unchanged")

	// Owner references that differ only in controller are not merged.
	notController := pod("web-3", "web", nil)
	notController.OwnerReferences[0].Controller = ptr.To(false)
	_, err := c.transform(notController)
	require.NoError(t, err)
	assert.False(t, same(a.OwnerReferences, notController.OwnerReferences))
	assert.Nil(t, notController.Labels)
}

func TestTransformSharesAReplicaSetsPodLabelsWithItsPods(t *testing.T) {
	t.Parallel()
	c := &Cache{strip: true, interner: newInterner()}
	labels := func() map[string]string { return map[string]string{"app": "web"} }
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels()}}}
	rs.Spec.Template.Labels = labels()
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-1", Labels: labels()}}
	for _, obj := range []any{rs, pod} {
		_, err := c.transform(obj)
		require.NoError(t, err)
	}
	ptr := func(m map[string]string) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }
	assert.Equal(t, ptr(rs.Spec.Selector.MatchLabels), ptr(rs.Spec.Template.Labels))
	assert.Equal(t, ptr(rs.Spec.Template.Labels), ptr(pod.Labels))
	assert.Equal(t, labels(), pod.Labels)
}

func TestInternerStartsAfreshWhenFull(t *testing.T) {
	t.Parallel()
	in := newInterner()
	first := map[string]string{"app": "web"}
	in.intern(&metav1.ObjectMeta{Labels: first})
	for i := range maxInterned {
		in.intern(&metav1.ObjectMeta{Labels: map[string]string{"n": strconv.Itoa(i)}})
	}
	again := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}
	in.intern(again)
	assert.LessOrEqual(t, in.entries, maxInterned)
	assert.NotEqual(t, reflect.ValueOf(first).UnsafePointer(), reflect.ValueOf(again.Labels).UnsafePointer(),
		"the tables were dropped, so the first map is no longer handed out")
}

// On a fake clientset a typed resource lists through the tracker, under
// the same kind and scope as through the REST clients.
func TestTypedListWatchOnAFake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		listWatch    func(*fake.Clientset) (string, *toolscache.ListWatch, error)
		kind, wantNs string
		wantResource string
	}{
		{"namespaced", func(cs *fake.Clientset) (string, *toolscache.ListWatch, error) {
			return typedListWatch[*appsv1.ReplicaSet](cs, appsv1.SchemeGroupVersion.WithResource("replicasets"), "shop")
		}, "ReplicaSet", "shop", "replicasets"},
		{"cluster-scoped", func(cs *fake.Clientset) (string, *toolscache.ListWatch, error) {
			return typedListWatch[*admissionregistrationv1.MutatingWebhookConfiguration](cs,
				admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), "shop")
		}, "MutatingWebhookConfiguration", "", "mutatingwebhookconfigurations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset()
			kind, lw, err := tt.listWatch(cs)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, kind)
			list, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.True(t, meta.IsListType(list), "a list: %T", list)
			w, err := lw.WatchWithContext(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			w.Stop()
			require.Len(t, cs.Actions(), 2)
			for _, a := range cs.Actions() {
				assert.Equal(t, tt.wantNs, a.GetNamespace(), "the namespace of the %s", a.GetVerb())
				assert.Equal(t, tt.wantResource, a.GetResource().Resource)
			}
		})
	}
}
