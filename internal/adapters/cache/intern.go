package cache

import (
	"hash/maphash"
	"maps"
	"reflect"
	"sync"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxInterned bounds the interner's tables, which start afresh past it:
// memory stays bounded whatever the churn.
const maxInterned = 4096

// interner makes cached (read-only) objects share equal label and
// annotation maps and owner reference lists: the Pods of one ReplicaSet
// carry the same ones, most of a metadata-only Pod's memory
// (docs/performance.md, workload memory).
type interner struct {
	seed maphash.Seed

	mu      sync.Mutex // transforms of different informers run concurrently
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

// intern replaces obj's metadata by equal values shared with other
// objects; for a ReplicaSet, its selector's and Pod template's labels too.
// Only typed objects gain: an unstructured object's accessors copy.
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
