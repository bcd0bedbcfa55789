package handler

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Mapper maps one event to the requests it causes. Create is called for
// every addition the source delivers, including the objects of its initial
// list.
//
// Objects are shared with the cache: a mapper must not modify them. A nil
// object yields no request.
type Mapper interface {
	Create(obj metav1.Object) []ports.Request
	Update(oldObj, newObj metav1.Object) []ports.Request
	Delete(obj metav1.Object) []ports.Request
}

// EnqueueObject requests a reconcile of the object the event is about. On
// update that is the new object (the old one if the new one is missing; both
// have the same name).
func EnqueueObject() Mapper { return enqueueObject{} }

type enqueueObject struct{}

func (enqueueObject) Create(obj metav1.Object) []ports.Request { return requestFor(obj) }

func (enqueueObject) Update(oldObj, newObj metav1.Object) []ports.Request {
	if newObj != nil {
		return requestFor(newObj)
	}
	return requestFor(oldObj)
}

func (enqueueObject) Delete(obj metav1.Object) []ports.Request { return requestFor(obj) }

func requestFor(obj metav1.Object) []ports.Request {
	if obj == nil {
		return nil
	}
	return []ports.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
}

// EnqueueOwner requests a reconcile of the object's controller: the owner
// reference marked controller: true, when it names an object of the given
// group and kind. Other owners, and objects without a controller, yield no
// request. The version in the reference does not matter.
//
// The owner is looked up in the object's namespace, which is where
// Kubernetes requires a namespaced owner to be; cluster-scoped owners are
// not supported.
func EnqueueOwner(owner schema.GroupKind) Mapper { return enqueueOwner{owner: owner} }

type enqueueOwner struct{ owner schema.GroupKind }

func (e enqueueOwner) Create(obj metav1.Object) []ports.Request {
	return e.add(nil, obj)
}

func (e enqueueOwner) Update(oldObj, newObj metav1.Object) []ports.Request {
	return e.add(e.add(nil, oldObj), newObj)
}

func (e enqueueOwner) Delete(obj metav1.Object) []ports.Request {
	return e.add(nil, obj)
}

func (e enqueueOwner) add(reqs []ports.Request, obj metav1.Object) []ports.Request {
	if obj == nil {
		return reqs
	}
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != e.owner.Kind {
		return reqs
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != e.owner.Group {
		return reqs
	}
	return appendUnique(reqs, ports.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
}

// MapFunc requests a reconcile of whatever fn returns for the object; on
// update, of what it returns for the old and for the new object. fn must be
// cheap and must not block: it runs on the source's delivery goroutine.
func MapFunc(fn func(obj metav1.Object) []ports.Request) Mapper { return mapFunc(fn) }

type mapFunc func(obj metav1.Object) []ports.Request

func (f mapFunc) Create(obj metav1.Object) []ports.Request {
	return f.add(nil, obj)
}

func (f mapFunc) Update(oldObj, newObj metav1.Object) []ports.Request {
	return f.add(f.add(nil, oldObj), newObj)
}

func (f mapFunc) Delete(obj metav1.Object) []ports.Request {
	return f.add(nil, obj)
}

func (f mapFunc) add(reqs []ports.Request, obj metav1.Object) []ports.Request {
	if obj == nil {
		return reqs
	}
	for _, r := range f(obj) {
		reqs = appendUnique(reqs, r)
	}
	return reqs
}

// appendUnique keeps the order of first appearance; the lists are a handful
// of requests, so a linear scan beats a set.
func appendUnique(reqs []ports.Request, r ports.Request) []ports.Request {
	for _, have := range reqs {
		if have == r {
			return reqs
		}
	}
	return append(reqs, r)
}
