package admission_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func pod(annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
	}
}

func TestPodAnnotator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		op              ports.Operation
		object          *corev1.Pod
		wantAnnotations map[string]string // nil: admitted unchanged
		wantWarnings    []string
	}{
		{
			name:            "create without annotations",
			op:              ports.OperationCreate,
			object:          pod(nil),
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
		},
		{
			name:            "create keeps other annotations",
			op:              ports.OperationCreate,
			object:          pod(map[string]string{"team": "a", "kubernetes.io/desc": "x"}),
			wantAnnotations: map[string]string{"team": "a", "kubernetes.io/desc": "x", admission.PodAnnotationKey: "foo"},
		},
		{
			name:            "update that removed it gets it back",
			op:              ports.OperationUpdate,
			object:          pod(map[string]string{"team": "a"}),
			wantAnnotations: map[string]string{"team": "a", admission.PodAnnotationKey: "foo"},
		},
		{
			name:            "another value is overwritten with a warning",
			op:              ports.OperationUpdate,
			object:          pod(map[string]string{admission.PodAnnotationKey: "bar"}),
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
			wantWarnings:    []string{`annotation example-mutating-admission-webhook was "bar", set to "foo"`},
		},
		{
			name:            "empty value is overwritten",
			op:              ports.OperationCreate,
			object:          pod(map[string]string{admission.PodAnnotationKey: ""}),
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
			wantWarnings:    []string{`annotation example-mutating-admission-webhook was "", set to "foo"`},
		},
		{
			name:   "already annotated is unchanged",
			op:     ports.OperationCreate,
			object: pod(map[string]string{admission.PodAnnotationKey: "foo", "team": "a"}),
		},
		{
			name: "delete is admitted unchanged",
			op:   ports.OperationDelete,
		},
		{
			name:   "connect is admitted unchanged",
			op:     ports.OperationConnect,
			object: pod(nil),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var before *corev1.Pod
			if tt.object != nil {
				before = tt.object.DeepCopy()
			}
			req := ports.AdmissionRequest[corev1.Pod]{Operation: tt.op, Object: tt.object, OldObject: pod(nil), Namespace: "apps", Name: "web"}

			got, err := admission.NewPodAnnotator().Mutate(context.Background(), req)

			require.NoError(t, err)
			assert.True(t, got.Allowed)
			assert.Equal(t, tt.wantWarnings, got.Warnings)
			assert.Equal(t, before, tt.object, "the request's object must not be modified")
			if tt.wantAnnotations == nil {
				assert.Nil(t, got.Object)
				return
			}
			require.NotNil(t, got.Object)
			assert.Equal(t, tt.wantAnnotations, got.Object.Annotations)
			want := before.DeepCopy()
			want.Annotations = tt.wantAnnotations
			assert.Equal(t, want, got.Object, "only the annotation changes")
			for k := range got.Object.Annotations {
				got.Object.Annotations[k] = "changed"
			}
			for k := range got.Object.Labels {
				got.Object.Labels[k] = "changed"
			}
			assert.Equal(t, before, tt.object, "the copy owns its metadata")
		})
	}
}

func TestPodValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		op          ports.Operation
		object      *corev1.Pod
		wantAllowed bool
		wantMessage string
	}{
		{name: "create with the annotation", op: ports.OperationCreate, object: pod(map[string]string{admission.PodAnnotationKey: "foo"}), wantAllowed: true},
		{name: "update with the annotation and others", op: ports.OperationUpdate, object: pod(map[string]string{admission.PodAnnotationKey: "foo", "team": "a"}), wantAllowed: true},
		{name: "create without annotations", op: ports.OperationCreate, object: pod(nil), wantMessage: "missing annotation example-mutating-admission-webhook"},
		{name: "update without the annotation", op: ports.OperationUpdate, object: pod(map[string]string{"team": "a"}), wantMessage: "missing annotation example-mutating-admission-webhook"},
		{name: "create with another value", op: ports.OperationCreate, object: pod(map[string]string{admission.PodAnnotationKey: "bar"}), wantMessage: `did not have value "foo"`},
		{name: "update with an empty value", op: ports.OperationUpdate, object: pod(map[string]string{admission.PodAnnotationKey: ""}), wantMessage: `did not have value "foo"`},
		{name: "delete is admitted", op: ports.OperationDelete, wantAllowed: true},
		{name: "connect is admitted", op: ports.OperationConnect, object: pod(nil), wantAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var before *corev1.Pod
			if tt.object != nil {
				before = tt.object.DeepCopy()
			}
			req := ports.AdmissionRequest[corev1.Pod]{Operation: tt.op, Object: tt.object, OldObject: pod(nil)}

			got, err := admission.NewPodValidator().Validate(context.Background(), req)

			require.NoError(t, err)
			assert.Equal(t, tt.wantAllowed, got.Allowed)
			if tt.wantAllowed {
				assert.Empty(t, got.Message)
			} else {
				assert.Contains(t, got.Message, tt.wantMessage)
			}
			assert.Equal(t, before, tt.object, "the request's object must not be modified")
		})
	}
}

func TestRulesRefuseToGuessWithoutAnObject(t *testing.T) {
	t.Parallel()
	for _, op := range []ports.Operation{ports.OperationCreate, ports.OperationUpdate} {
		req := ports.AdmissionRequest[corev1.Pod]{Operation: op}
		_, err := admission.NewPodAnnotator().Mutate(context.Background(), req)
		assert.Error(t, err, "mutate %s", op)
		_, err = admission.NewPodValidator().Validate(context.Background(), req)
		assert.Error(t, err, "validate %s", op)
	}
}
