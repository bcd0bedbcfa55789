package main

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestRawPodMutatorMatchesTypedDefaulter applies the raw handler's patch
// and the typed defaulter's to the same Pods: the Pods they leave must be
// equal, whatever annotations the request carries.
func TestRawPodMutatorMatchesTypedDefaulter(t *testing.T) {
	t.Parallel()
	typed := admission.WithDefaulter[*corev1.Pod](scheme, &podAnnotator{})
	raw := newRawPodMutator()

	tests := []struct {
		name        string
		op          admissionv1.Operation
		annotations map[string]string
		object      []byte // the request's object when not testPod(annotations)
		wantPatch   bool
		want        map[string]string // the annotations the patched Pod carries
	}{
		{
			name:      "no annotations",
			op:        admissionv1.Create,
			wantPatch: true,
			want:      map[string]string{podAnnotationKey: podAnnotationValue},
		},
		{
			name:      "empty annotations",
			op:        admissionv1.Create,
			object:    []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"apps","annotations":{}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}`),
			wantPatch: true,
			want:      map[string]string{podAnnotationKey: podAnnotationValue},
		},
		{
			name:        "other annotations are kept",
			op:          admissionv1.Create,
			annotations: map[string]string{"team": "a", "kubernetes.io/description": "web"},
			wantPatch:   true,
			want:        map[string]string{"team": "a", "kubernetes.io/description": "web", podAnnotationKey: podAnnotationValue},
		},
		{
			name:        "another value is replaced",
			op:          admissionv1.Update,
			annotations: map[string]string{podAnnotationKey: "bar", "team": "a"},
			wantPatch:   true,
			want:        map[string]string{podAnnotationKey: podAnnotationValue, "team": "a"},
		},
		{
			name:        "already annotated",
			op:          admissionv1.Update,
			annotations: map[string]string{podAnnotationKey: podAnnotationValue, "team": "a"},
			want:        map[string]string{podAnnotationKey: podAnnotationValue, "team": "a"},
		},
		{
			name:      "no metadata",
			op:        admissionv1.Create,
			object:    []byte(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"web","image":"nginx"}]}}`),
			wantPatch: true,
			want:      map[string]string{podAnnotationKey: podAnnotationValue},
		},
		{
			name: "delete",
			op:   admissionv1.Delete,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			object := tt.object
			if object == nil {
				var err error
				object, err = json.Marshal(testPod(tt.annotations))
				require.NoError(t, err)
			}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID:       "uid",
				Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
				Namespace: "apps",
				Name:      "web",
				Operation: tt.op,
			}}
			if tt.op == admissionv1.Delete {
				req.OldObject = runtime.RawExtension{Raw: object}
			} else {
				req.Object = runtime.RawExtension{Raw: object}
			}

			want := typed.Handle(context.Background(), req)
			got := raw.Handle(context.Background(), req)
			require.True(t, want.Allowed, "typed: %+v", want.Result)
			require.True(t, got.Allowed, "raw: %+v", got.Result)
			assert.Equal(t, want.UID, got.UID)
			assert.Equal(t, want.PatchType, got.PatchType)
			assert.Equal(t, tt.wantPatch, len(want.Patch) > 0, "typed patch %s", want.Patch)
			assert.Equal(t, tt.wantPatch, len(got.Patch) > 0, "raw patch %s", got.Patch)
			if tt.op == admissionv1.Delete {
				return
			}

			wantPod := applyPatch(t, object, want.Patch)
			gotPod := applyPatch(t, object, got.Patch)
			assert.Equal(t, wantPod, gotPod, "raw patch %s, typed patch %s", got.Patch, want.Patch)
			assert.Equal(t, tt.want, gotPod.Annotations)
		})
	}
}

// testPod is a Pod with the given annotations, nil for none.
func testPod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", Labels: map[string]string{"app": "web"}, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
}

// applyPatch is the Pod the API server makes of object with patch, a JSON
// patch or none.
func applyPatch(t *testing.T, object, patch []byte) *corev1.Pod {
	t.Helper()
	if len(patch) > 0 {
		p, err := jsonpatch.DecodePatch(patch)
		require.NoError(t, err)
		object, err = p.Apply(object)
		require.NoError(t, err, "apply %s", patch)
	}
	var pod corev1.Pod
	require.NoError(t, json.Unmarshal(object, &pod))
	return &pod
}
