package admission_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// denial is a rule's refusal message, "" when it admits; any other error
// fails the test.
func denial(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var d *ports.DeniedError
	require.True(t, errors.As(err, &d), "a refusal is ports.Denied, not %v", err)
	require.NotEmpty(t, d.Message)
	return d.Message
}

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
		annotations     map[string]string
		wantAnnotations map[string]string
		wantWarnings    ports.Warnings
	}{
		{
			name:            "without annotations",
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
		},
		{
			name:            "other annotations are kept",
			annotations:     map[string]string{"team": "a", "kubernetes.io/desc": "x"},
			wantAnnotations: map[string]string{"team": "a", "kubernetes.io/desc": "x", admission.PodAnnotationKey: "foo"},
		},
		{
			name:            "another value is overwritten with a warning",
			annotations:     map[string]string{admission.PodAnnotationKey: "bar"},
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
			wantWarnings:    ports.Warnings{`annotation example-mutating-admission-webhook was "bar", set to "foo"`},
		},
		{
			name:            "an empty value is overwritten",
			annotations:     map[string]string{admission.PodAnnotationKey: ""},
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo"},
			wantWarnings:    ports.Warnings{`annotation example-mutating-admission-webhook was "", set to "foo"`},
		},
		{
			name:            "already annotated is unchanged",
			annotations:     map[string]string{admission.PodAnnotationKey: "foo", "team": "a"},
			wantAnnotations: map[string]string{admission.PodAnnotationKey: "foo", "team": "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pod(tt.annotations)

			warnings, err := admission.NewPodAnnotator().Default(context.Background(), got)

			require.NoError(t, err)
			assert.Equal(t, tt.wantWarnings, warnings)
			want := pod(tt.wantAnnotations)
			assert.Equal(t, want, got, "only the annotation changes")
		})
	}
}

func TestPodValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		annotations map[string]string
		wantDenial  string // "" = admitted
	}{
		{name: "annotated", annotations: map[string]string{admission.PodAnnotationKey: "foo"}},
		{name: "annotated among others", annotations: map[string]string{admission.PodAnnotationKey: "foo", "team": "a"}},
		{name: "without annotations", wantDenial: "missing annotation example-mutating-admission-webhook"},
		{name: "without the annotation", annotations: map[string]string{"team": "a"}, wantDenial: "missing annotation example-mutating-admission-webhook"},
		{name: "another value", annotations: map[string]string{admission.PodAnnotationKey: "bar"}, wantDenial: `did not have value "foo"`},
		{name: "an empty value", annotations: map[string]string{admission.PodAnnotationKey: ""}, wantDenial: `did not have value "foo"`},
	}
	ctx := context.Background()
	v := admission.NewPodValidator()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := pod(tt.annotations)
			before := obj.DeepCopy()

			warnings, createErr := v.ValidateCreate(ctx, obj)
			assert.Empty(t, warnings)
			warnings, updateErr := v.ValidateUpdate(ctx, pod(nil), obj)
			assert.Empty(t, warnings)

			for _, err := range []error{createErr, updateErr} {
				if tt.wantDenial == "" {
					assert.Empty(t, denial(t, err))
				} else {
					assert.Contains(t, denial(t, err), tt.wantDenial)
				}
			}
			assert.Equal(t, before, obj, "a validator changes nothing")
			_, err := v.ValidateDelete(ctx, obj)
			assert.NoError(t, err, "deletions are admitted")
		})
	}
}
