package predicate

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Predicate decides whether an event reaches the controller's queue; Create
// is asked about the objects of the initial list too. Objects are shared
// with the cache: a predicate must not modify them.
type Predicate interface {
	Create(obj metav1.Object) bool
	Update(oldObj, newObj metav1.Object) bool
	Delete(obj metav1.Object) bool
}

// Funcs is a Predicate made of functions; a nil function answers true.
type Funcs struct {
	CreateFunc func(obj metav1.Object) bool
	UpdateFunc func(oldObj, newObj metav1.Object) bool
	DeleteFunc func(obj metav1.Object) bool
}

var _ Predicate = Funcs{}

// Create implements Predicate.
func (f Funcs) Create(obj metav1.Object) bool {
	return f.CreateFunc == nil || f.CreateFunc(obj)
}

// Update implements Predicate.
func (f Funcs) Update(oldObj, newObj metav1.Object) bool {
	return f.UpdateFunc == nil || f.UpdateFunc(oldObj, newObj)
}

// Delete implements Predicate.
func (f Funcs) Delete(obj metav1.Object) bool {
	return f.DeleteFunc == nil || f.DeleteFunc(obj)
}

// ObjectFunc applies one filter to every event: the object on create and
// delete, the new object on update.
func ObjectFunc(filter func(obj metav1.Object) bool) Predicate {
	return Funcs{
		CreateFunc: filter,
		UpdateFunc: func(_, newObj metav1.Object) bool { return filter(newObj) },
		DeleteFunc: filter,
	}
}

// updateOnly builds a "changed" predicate: creates and deletes pass, an
// update passes when changed says so, and one missing an object is dropped.
func updateOnly(changed func(oldObj, newObj metav1.Object) bool) Predicate {
	return Funcs{UpdateFunc: func(oldObj, newObj metav1.Object) bool {
		if oldObj == nil || newObj == nil {
			return false
		}
		return changed(oldObj, newObj)
	}}
}

// GenerationChanged passes updates that changed metadata.generation, which
// the API server bumps on spec changes only.
func GenerationChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool { return o.GetGeneration() != n.GetGeneration() })
}

// LabelChanged passes updates that changed the labels (nil and empty alike).
func LabelChanged() Predicate {
	return updateOnly(func(o, n metav1.Object) bool { return !maps.Equal(o.GetLabels(), n.GetLabels()) })
}

// And passes an event that every predicate passes; with none it passes
// everything.
func And(predicates ...Predicate) Predicate { return combine(predicates, false) }

// Or passes an event that any predicate passes; with none it passes nothing.
func Or(predicates ...Predicate) Predicate { return combine(predicates, true) }

// combine passes an event when some predicate passes it (some) or when none
// drops it (!some).
func combine(predicates []Predicate, some bool) Predicate {
	pass := func(ask func(Predicate) bool) bool {
		return slices.ContainsFunc(predicates, func(p Predicate) bool { return ask(p) == some }) == some
	}
	return Funcs{
		CreateFunc: func(obj metav1.Object) bool { return pass(func(p Predicate) bool { return p.Create(obj) }) },
		UpdateFunc: func(o, n metav1.Object) bool { return pass(func(p Predicate) bool { return p.Update(o, n) }) },
		DeleteFunc: func(obj metav1.Object) bool { return pass(func(p Predicate) bool { return p.Delete(obj) }) },
	}
}

// Not inverts p.
func Not(p Predicate) Predicate {
	return Funcs{
		CreateFunc: func(obj metav1.Object) bool { return !p.Create(obj) },
		UpdateFunc: func(o, n metav1.Object) bool { return !p.Update(o, n) },
		DeleteFunc: func(obj metav1.Object) bool { return !p.Delete(obj) },
	}
}
