package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// The annotation every Pod must carry.
const (
	PodAnnotationKey   = "example-mutating-admission-webhook"
	PodAnnotationValue = "foo"
)

// PodAnnotator is the mutating rule for Pods: it sets the annotation,
// keeping every other one, and warns when it overwrites another value.
type PodAnnotator struct{}

var _ ports.Defaulter[*corev1.Pod] = (*PodAnnotator)(nil)

// NewPodAnnotator returns the Pod annotator.
func NewPodAnnotator() *PodAnnotator { return &PodAnnotator{} }

// Default sets the annotation.
func (*PodAnnotator) Default(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	current, present := pod.Annotations[PodAnnotationKey]
	if present && current == PodAnnotationValue {
		return nil, nil
	}
	var warnings ports.Warnings
	if present {
		warnings = append(warnings, fmt.Sprintf("annotation %s was %q, set to %q", PodAnnotationKey, current, PodAnnotationValue))
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[PodAnnotationKey] = PodAnnotationValue
	return warnings, nil
}

// PodValidator is the validating rule for Pods: it refuses a Pod without
// the annotation, or with another value, so that a Pod that slipped past
// the annotator (a later mutating webhook removed the annotation) is
// caught.
type PodValidator struct{}

var _ ports.Validator[*corev1.Pod] = (*PodValidator)(nil)

// NewPodValidator returns the Pod validator.
func NewPodValidator() *PodValidator { return &PodValidator{} }

// ValidateCreate requires the annotation.
func (*PodValidator) ValidateCreate(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	switch value, present := pod.Annotations[PodAnnotationKey]; {
	case !present:
		return nil, ports.Denied(fmt.Sprintf("missing annotation %s", PodAnnotationKey))
	case value != PodAnnotationValue:
		return nil, ports.Denied(fmt.Sprintf("annotation %s did not have value %q", PodAnnotationKey, PodAnnotationValue))
	}
	return nil, nil
}

// ValidateUpdate requires the annotation, as ValidateCreate does.
func (v *PodValidator) ValidateUpdate(ctx context.Context, _, pod *corev1.Pod) (ports.Warnings, error) {
	return v.ValidateCreate(ctx, pod)
}

// ValidateDelete admits every deletion.
func (*PodValidator) ValidateDelete(context.Context, *corev1.Pod) (ports.Warnings, error) {
	return nil, nil
}
