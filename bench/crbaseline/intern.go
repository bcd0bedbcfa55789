package main

import (
	"hash/maphash"
	"maps"
	"reflect"
	"sync"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// maxInterned bounds the interner's tables, which start afresh past it, as
// the operator's do: memory stays bounded whatever the churn.
const maxInterned = 4096

// interner is the operator's metadata sharing (its cache adapter's
// intern.go, which this module cannot import), written again for the
// expert mode: cached objects share equal label and annotation maps and
// owner reference lists, so the Pods of one ReplicaSet hold one copy of
// them. Sharing is only safe because cached objects are read-only: every
// reconciler copies an object before it changes it.
type interner struct {
	seed maphash.Seed

	mu      sync.Mutex // the transforms of different informers run concurrently
	dicts   map[uint64][]map[string]string
	owners  map[uint64][][]metav1.OwnerReference
	entries int
}

func newInterner() *interner {
	in := &interner{seed: maphash.MakeSeed()}
	in.reset()
	return in
}

func (in *interner) reset() {
	in.dicts = map[uint64][]map[string]string{}
	in.owners = map[uint64][][]metav1.OwnerReference{}
	in.entries = 0
}

// transform interns what next left of an object, so that it composes with
// the other cache transforms; next may be nil. Tombstones and anything
// without metadata pass untouched.
func (in *interner) transform(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if next != nil {
			var err error
			if obj, err = next(obj); err != nil {
				return obj, err
			}
		}
		if m, err := meta.Accessor(obj); err == nil {
			in.intern(m)
		}
		return obj, nil
	}
}

// intern replaces obj's metadata by equal values shared with other
// objects; for a ReplicaSet, its selector's and Pod template's labels too.
func (in *interner) intern(obj metav1.Object) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.entries >= maxInterned {
		in.reset()
	}
	if rs, ok := obj.(*appsv1.ReplicaSet); ok {
		if sel := rs.Spec.Selector; sel != nil && len(sel.MatchLabels) > 0 {
			sel.MatchLabels = in.dict(sel.MatchLabels)
		}
		if t := &rs.Spec.Template; len(t.Labels) > 0 {
			t.Labels = in.dict(t.Labels)
		}
	}
	obj.SetNamespace(unique.Make(obj.GetNamespace()).Value())
	if l := obj.GetLabels(); len(l) > 0 {
		obj.SetLabels(in.dict(l))
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		obj.SetAnnotations(in.dict(a))
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		obj.SetOwnerReferences(in.ownerRefs(refs))
	}
}

func (in *interner) dict(m map[string]string) map[string]string {
	// Order-independent: a sum of per-entry hashes.
	var sum uint64
	var h maphash.Hash
	h.SetSeed(in.seed)
	for k, v := range m {
		h.Reset()
		_, _ = h.WriteString(k)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(v)
		sum += h.Sum64()
	}
	for _, shared := range in.dicts[sum] {
		if maps.Equal(shared, m) {
			return shared
		}
	}
	in.dicts[sum] = append(in.dicts[sum], m)
	in.entries++
	return m
}

func (in *interner) ownerRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	var h maphash.Hash
	h.SetSeed(in.seed)
	for _, r := range refs {
		_, _ = h.WriteString(r.APIVersion)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(r.Kind)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(r.Name)
		_ = h.WriteByte(0)
		_, _ = h.WriteString(string(r.UID))
		_ = h.WriteByte(0)
	}
	sum := h.Sum64()
	for _, shared := range in.owners[sum] {
		if reflect.DeepEqual(shared, refs) {
			return shared
		}
	}
	in.owners[sum] = append(in.owners[sum], refs)
	in.entries++
	return refs
}
