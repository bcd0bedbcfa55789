package controller

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// MapFunc names the requests an event of a watched object causes; it is
// asked about both objects of an update. It must be cheap and must not
// modify the object, which the cache shares.
type MapFunc func(obj metav1.Object) []ports.Request

// EnqueueObject requests a reconcile of the object itself.
func EnqueueObject(obj metav1.Object) []ports.Request {
	return []ports.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
}

// EnqueueOwner requests a reconcile of the object's controlling owner, in
// the object's namespace, when it is of the given group and kind (any
// version).
func EnqueueOwner(owner schema.GroupKind) MapFunc {
	return func(obj metav1.Object) []ports.Request {
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.Kind != owner.Kind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != owner.Group {
			return nil
		}
		return []ports.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
	}
}

// requestsOf maps each of objs that is not nil, each request once.
func requestsOf(m MapFunc, objs ...metav1.Object) []ports.Request {
	var out []ports.Request
	for _, obj := range objs {
		if obj == nil {
			continue
		}
		for _, r := range m(obj) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}
