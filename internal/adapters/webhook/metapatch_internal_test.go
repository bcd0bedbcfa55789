package webhook

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	jsonpatchapply "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The direct patch of a metadata change applies to the object as received
// and yields the rule's object, exactly as the diff of the encodings does;
// anything it cannot be sure of is left to that diff.
func TestMetadataPatch(t *testing.T) {
	t.Parallel()
	base := func(labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: labels, Annotations: annotations},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
	}
	tests := []struct {
		name   string
		before *corev1.Pod
		edit   func(*corev1.Pod)
		direct bool
	}{
		{"annotation added to none", base(nil, nil), func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "1"} }, true},
		{"annotation added", base(nil, map[string]string{"x": "y"}), func(p *corev1.Pod) { p.Annotations["a/b~c"] = "1" }, true},
		{"annotation replaced", base(nil, map[string]string{"a": "0"}), func(p *corev1.Pod) { p.Annotations["a"] = "1" }, true},
		{"annotation removed, one left", base(nil, map[string]string{"a": "0", "b": "1"}), func(p *corev1.Pod) { delete(p.Annotations, "a") }, true},
		{"labels and annotations", base(map[string]string{"l": "0"}, nil), func(p *corev1.Pod) {
			p.Labels["l"], p.Labels["m"] = "1", "2"
			p.Annotations = map[string]string{"a": "1"}
		}, true},
		{"last annotation removed", base(nil, map[string]string{"a": "0"}), func(p *corev1.Pod) { p.Annotations = nil }, false},
		{"spec changed too", base(nil, nil), func(p *corev1.Pod) {
			p.Annotations = map[string]string{"a": "1"}
			p.Spec.Containers[0].Image = "nginx"
		}, false},
		{"nothing in metadata", base(nil, nil), func(p *corev1.Pod) { p.Spec.NodeName = "n" }, false},
		{"no change", base(nil, map[string]string{"a": "0"}), func(*corev1.Pod) {}, true},
		{"no change, without a name", &corev1.Pod{}, func(*corev1.Pod) {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := tt.before
			after := tt.before.DeepCopy()
			tt.edit(after)
			edited := after.DeepCopy()
			ops, ok := metadataPatch(before, after)
			require.Equal(t, tt.direct, ok)
			assert.Equal(t, edited, after, "after is as it was given")
			if !ok {
				return
			}
			if reflect.DeepEqual(before, after) {
				assert.Empty(t, ops)
				return
			}
			raw, err := json.Marshal(tt.before)
			require.NoError(t, err)
			patch, err := json.Marshal(ops)
			require.NoError(t, err)
			decoded, err := jsonpatchapply.DecodePatch(patch)
			require.NoError(t, err)
			patched, err := decoded.Apply(raw)
			require.NoError(t, err)
			want, err := json.Marshal(after)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(patched))
		})
	}
}

// A metadata-only rule's patch applies to the object as received, whatever
// metadata it carries: none at all (the patch adds it first), or fields
// this build does not know, which the patch keeps.
func TestMetadataOnlyPatchAppliesToTheRawObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw string
		wantFirst string // the first operation's path
	}{
		{"named", `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c"}]}}`, "/metadata/annotations"},
		{"annotated", `{"metadata":{"generateName":"p-","annotations":{"x":"y"}},"spec":{}}`, "/metadata/annotations/a"},
		{"no metadata", `{"spec":{"containers":[{"name":"c"}]}}`, "/metadata"},
		{"unknown metadata only", `{"metadata":{"future":{"k":1}},"spec":{}}`, "/metadata/annotations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := []byte(tt.raw)
			before, err := decodeObject[corev1.Pod](raw, "object", true)
			require.NoError(t, err)
			after := before.DeepCopy()
			if after.Annotations == nil {
				after.Annotations = map[string]string{}
			}
			after.Annotations["a"] = "b"
			ops, ok := metadataOnlyPatch(before, after, raw)
			require.True(t, ok)
			require.NotEmpty(t, ops)
			assert.Equal(t, tt.wantFirst, ops[0].Path)
			encoded, err := json.Marshal(ops)
			require.NoError(t, err)
			patch, err := jsonpatchapply.DecodePatch(encoded)
			require.NoError(t, err)
			patched, err := patch.Apply(raw)
			require.NoError(t, err, "patch %s", encoded)
			var got map[string]any
			require.NoError(t, json.Unmarshal(patched, &got))
			var want map[string]any
			require.NoError(t, json.Unmarshal(raw, &want))
			meta, _ := want["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			annotations, _ := meta["annotations"].(map[string]any)
			if annotations == nil {
				annotations = map[string]any{}
			}
			annotations["a"] = "b"
			meta["annotations"] = annotations
			want["metadata"] = meta
			assert.Equal(t, want, got, "the object as received with the annotation, nothing lost")
		})
	}

	t.Run("more than metadata", func(t *testing.T) {
		t.Parallel()
		before := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
		after := before.DeepCopy()
		after.Spec.NodeName = "n"
		_, ok := metadataOnlyPatch(before, after, []byte(`{"metadata":{"name":"p"}}`))
		assert.False(t, ok)
	})
}
