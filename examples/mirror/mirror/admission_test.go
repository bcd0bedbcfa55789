package mirror_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/examples/mirror/mirror"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// withKeys is a ConfigMap with data keys and binary keys, labelled as
// labels say.
func withKeys(labels map[string]string, data, binary int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: labels}}
	for i := range data {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["k"+strconv.Itoa(i)] = "v"
	}
	for i := range binary {
		if cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		cm.BinaryData["b"+strconv.Itoa(i)] = []byte{byte(i)}
	}
	return cm
}

func TestValidator(t *testing.T) {
	t.Parallel()
	labelled := map[string]string{mirror.Label: "true"}
	tests := []struct {
		name       string
		cm         *corev1.ConfigMap
		wantDenied string // the message; "" when admitted
	}{
		{name: "a labelled ConfigMap without keys", cm: withKeys(labelled, 0, 0)},
		{name: "exactly 10 keys of data", cm: withKeys(labelled, 10, 0)},
		{name: "exactly 10 keys, data and binary data together", cm: withKeys(labelled, 4, 6)},
		{
			name:       "11 keys of data",
			cm:         withKeys(labelled, 11, 0),
			wantDenied: "a ConfigMap labelled example.test/mirror=true has at most 10 keys in data and binaryData, this one has 11",
		},
		{
			name:       "11 keys, data and binary data together",
			cm:         withKeys(labelled, 5, 6),
			wantDenied: "a ConfigMap labelled example.test/mirror=true has at most 10 keys in data and binaryData, this one has 11",
		},
		{name: "an unlabelled ConfigMap of any size, should the selector send one", cm: withKeys(nil, 50, 50)},
		{name: "nor one labelled false", cm: withKeys(map[string]string{mirror.Label: "false"}, 11, 0)},
	}
	ctx := context.Background()
	v := mirror.NewValidator()
	old := withKeys(labelled, 1, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := tt.cm.DeepCopy()

			createWarnings, createErr := v.ValidateCreate(ctx, tt.cm)
			updateWarnings, updateErr := v.ValidateUpdate(ctx, old, tt.cm)

			assert.Empty(t, createWarnings)
			assert.Empty(t, updateWarnings)
			assert.Equal(t, before, tt.cm, "a validator changes nothing")
			for _, err := range []error{createErr, updateErr} {
				if tt.wantDenied == "" {
					assert.NoError(t, err)
					continue
				}
				var d *ports.DeniedError
				require.True(t, errors.As(err, &d), "a refusal is ports.Denied, not %v", err)
				assert.Equal(t, tt.wantDenied, d.Message)
			}
		})
	}
}

// An update is judged by the new object: one that removes the label is
// admitted whatever it holds, one that adds it is held to the limit.
func TestValidateUpdateJudgesTheNewObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := mirror.NewValidator()
	big := map[string]string{mirror.Label: "true"}

	_, err := v.ValidateUpdate(ctx, withKeys(big, 11, 0), withKeys(nil, 11, 0))
	assert.NoError(t, err, "the label removed")
	_, err = v.ValidateUpdate(ctx, withKeys(nil, 11, 0), withKeys(big, 11, 0))
	var d *ports.DeniedError
	assert.ErrorAs(t, err, &d, "the label added")
	_, err = v.ValidateDelete(ctx, withKeys(big, 11, 0))
	assert.NoError(t, err, "deletions are not the rule's business")
}
