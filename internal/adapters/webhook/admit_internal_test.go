package webhook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
