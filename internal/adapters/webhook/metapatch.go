package webhook

import (
	"reflect"
	"slices"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"gomodules.xyz/jsonpatch/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metadataPatch builds the JSON patch from before to after, without
// encoding either, when they differ in labels and annotations only (or
// not at all). ok is false when anything else changed, or when it cannot
// be sure the request carries metadata: the caller then diffs encodings.
func metadataPatch[T any](before, after *T) (ops []jsonpatch.Operation, ok bool) {
	b, okB := any(before).(metav1.Object)
	a, okA := any(after).(metav1.Object)
	if !okB || !okA {
		return nil, false
	}
	if b.GetName() == "" && b.GetGenerateName() == "" && b.GetNamespace() == "" {
		return nil, false
	}
	return metadataOps(b, a, before, after)
}

// metadataOps is metadataPatch without its check that the request carries
// metadata: b and a are before and after as metav1.Objects.
func metadataOps[T any](b, a metav1.Object, before, after *T) (ops []jsonpatch.Operation, ok bool) {
	labelOps, ok := mapPatch("/metadata/labels", b.GetLabels(), a.GetLabels())
	if !ok {
		return nil, false
	}
	annotationOps, ok := mapPatch("/metadata/annotations", b.GetAnnotations(), a.GetAnnotations())
	if !ok {
		return nil, false
	}
	// Everything else must be equal: compare with before's two maps in
	// after for a moment, rather than copies of two whole objects.
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

// metadataOnlyPatch is the patch of a rule that saw raw's metadata alone:
// not ok when it changed more than labels and annotations. When raw has
// no metadata at all, the patch adds it first. Whether it has is asked of
// raw only when the metadata decoded from it is empty, which a request of
// the API server's never is (every object has a name or generateName):
// finding a key in a large object is most of a request's cost.
func metadataOnlyPatch[T any](before, after *T, raw []byte) (ops []jsonpatch.Operation, ok bool) {
	b, okB := any(before).(metav1.Object)
	a, okA := any(after).(metav1.Object)
	m, okM := objectMeta(before)
	if !okB || !okA || !okM {
		return nil, false
	}
	if ops, ok = metadataOps(b, a, before, after); !ok || len(ops) == 0 {
		return ops, ok
	}
	if m.Name != "" || m.GenerateName != "" || !reflect.DeepEqual(*m, metav1.ObjectMeta{}) ||
		decodeConfig.Get(raw, "metadata").ValueType() != jsoniter.InvalidValue {
		return ops, true
	}
	return append([]jsonpatch.Operation{{Operation: "add", Path: "/metadata", Value: map[string]any{}}}, ops...), true
}

// mapPatch is the patch of one string map at path, as a diff of the
// encodings spells it; not ok for a map emptied, which they spell in more
// than one way.
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
	for _, k := range sortedKeys(after) {
		switch old, had := before[k]; {
		case !had:
			ops = append(ops, jsonpatch.Operation{Operation: "add", Path: path + "/" + escapePointer(k), Value: after[k]})
		case old != after[k]:
			ops = append(ops, jsonpatch.Operation{Operation: "replace", Path: path + "/" + escapePointer(k), Value: after[k]})
		}
	}
	for _, k := range sortedKeys(before) {
		if _, keep := after[k]; !keep {
			ops = append(ops, jsonpatch.Operation{Operation: "remove", Path: path + "/" + escapePointer(k)})
		}
	}
	return ops, true
}

// sortedKeys are m's keys in order, in one allocation (slices.Sorted grows
// its slice as the iterator yields).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
