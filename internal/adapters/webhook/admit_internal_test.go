package webhook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
)

// Objects decode as the API server decodes them: field names match
// exactly (encoding/json would also take "Annotations"), unknown fields
// are dropped, and errors do not quote the body.
func TestDecodeObjectMatchesFieldNamesExactly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		raw             string
		wantAnnotations map[string]string
		wantErr         string
	}{
		{"exact names", `{"metadata":{"annotations":{"a":"b"}}}`, map[string]string{"a": "b"}, ""},
		{"another case is another field", `{"Metadata":{"annotations":{"a":"b"}},"metadata":{"Annotations":{"c":"d"}}}`, nil, ""},
		{"unknown fields", `{"metadata":{"annotations":{"a":"b"},"future":1},"later":{}}`, map[string]string{"a": "b"}, ""},
		{"escaped value", `{"metadata":{"annotations":{"a":"\u0062\n"}}}`, map[string]string{"a": "b\n"}, ""},
		{"wrong type", `{"metadata":{"annotations":{"a":1}}}`, nil, "decode request.object"},
		{"trailing data", `{"metadata":{}} {}`, nil, "decode request.object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod, err := decodeObject[corev1.Pod]([]byte(tt.raw), "object")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), "error found in #", "the error quotes the body")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAnnotations, pod.Annotations)
		})
	}
}

// Patches are spelled byte for byte as jsonpatch.Operation's own encoding
// spells them, whatever the operation and value.
func TestEncodePatchSpellsOperationsAsJSONPatchDoes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ops  []jsonpatch.Operation
	}{
		{"none", []jsonpatch.Operation{}},
		{"add a string", []jsonpatch.Operation{{Operation: "add", Path: "/metadata/annotations/a~1b", Value: "foo"}}},
		{"add a map, keys sorted", []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels", Value: map[string]any{"z": "1", "a": "2"}}}},
		{"escapes", []jsonpatch.Operation{{Operation: "replace", Path: "/metadata/annotations/x", Value: "<a href=\"&\">\u2028\n\x01é</a>"}}},
		{"add and replace keep a null value", []jsonpatch.Operation{{Operation: "add", Path: "/spec/x"}, {Operation: "replace", Path: "/spec/y"}}},
		{"remove has no value", []jsonpatch.Operation{{Operation: "remove", Path: "/metadata/labels/a"}}},
		{"numbers, lists, objects", []jsonpatch.Operation{
			{Operation: "add", Path: "/spec/replicas", Value: float64(3)},
			{Operation: "replace", Path: "/spec/containers/0", Value: map[string]any{"name": "web", "ports": []any{float64(80), true, nil}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(tt.ops)
			require.NoError(t, err)

			got, err := encodePatch(tt.ops)

			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}
