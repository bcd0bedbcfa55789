package webhook

import (
	"reflect"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metadataPatch builds the JSON patch from before to after when the two
// differ in metadata.labels and metadata.annotations only, or not at all,
// without encoding either. ok is false when it cannot tell (no metadata it can be sure the
// request carries), or when anything else changed: the caller then diffs
// the encodings. after is changed while it compares, and restored.
func metadataPatch[T any](before, after *T) (ops []jsonpatch.Operation, ok bool) {
	b, okB := any(before).(metav1.Object)
	a, okA := any(after).(metav1.Object)
	if !okB || !okA {
		return nil, false
	}
	// Only an object that names itself surely arrived with a metadata
	// object to patch into.
	if b.GetName() == "" && b.GetGenerateName() == "" && b.GetNamespace() == "" {
		return nil, false
	}
	labelOps, ok := mapPatch("/metadata/labels", b.GetLabels(), a.GetLabels())
	if !ok {
		return nil, false
	}
	annotationOps, ok := mapPatch("/metadata/annotations", b.GetAnnotations(), a.GetAnnotations())
	if !ok {
		return nil, false
	}
	// Everything else must be equal (with no metadata change, that is
	// "no change": no patch): compare with after's two maps those of before
	// for a moment, rather than copies of two whole objects.
	labels, annotations := a.GetLabels(), a.GetAnnotations()
	a.SetLabels(b.GetLabels())
	a.SetAnnotations(b.GetAnnotations())
	equal := reflect.DeepEqual(before, after)
	a.SetLabels(labels)
	a.SetAnnotations(annotations)
	if !equal {
		return nil, false
	}
	return append(labelOps, annotationOps...), true
}

// mapPatch is the patch of one string map at path, as a diff of the
// encodings would spell it: the whole map added when there was none, else
// one operation per key. ok is false for a map emptied or removed, which
// the encodings spell in more than one way.
func mapPatch(path string, before, after map[string]string) ([]jsonpatch.Operation, bool) {
	if len(after) == 0 {
		if len(before) == 0 {
			return nil, true
		}
		return nil, false
	}
	if len(before) == 0 {
		value := make(map[string]any, len(after))
		for k, v := range after {
			value[k] = v
		}
		return []jsonpatch.Operation{{Operation: "add", Path: path, Value: value}}, true
	}
	var ops []jsonpatch.Operation
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		old, had := before[k]
		switch {
		case !had:
			ops = append(ops, jsonpatch.Operation{Operation: "add", Path: path + "/" + escapePointer(k), Value: after[k]})
		case old != after[k]:
			ops = append(ops, jsonpatch.Operation{Operation: "replace", Path: path + "/" + escapePointer(k), Value: after[k]})
		}
	}
	removed := make([]string, 0)
	for k := range before {
		if _, keep := after[k]; !keep {
			removed = append(removed, k)
		}
	}
	slices.Sort(removed)
	for _, k := range removed {
		ops = append(ops, jsonpatch.Operation{Operation: "remove", Path: path + "/" + escapePointer(k)})
	}
	return ops, true
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
