package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// The annotation every Pod must carry.
const (
	PodAnnotationKey   = "example-mutating-admission-webhook"
	PodAnnotationValue = "foo"
)

// errNoObject means the adapter handed over a CREATE or UPDATE without the
// object; the rule cannot decide.
var errNoObject = errors.New("admission request without an object")

// PodAnnotator is the mutating rule for Pods: it sets the annotation.
type PodAnnotator struct{}

var _ ports.Mutator[corev1.Pod] = (*PodAnnotator)(nil)

// NewPodAnnotator returns the Pod annotator. It has no dependencies; the
// constructor exists so it is wired like every other rule.
func NewPodAnnotator() *PodAnnotator { return &PodAnnotator{} }

// Mutate sets the annotation on CREATE and UPDATE and admits everything
// else unchanged.
func (*PodAnnotator) Mutate(_ context.Context, req ports.AdmissionRequest[corev1.Pod]) (ports.Mutation[corev1.Pod], error) {
	if !createOrUpdate(req.Operation) {
		return ports.Mutation[corev1.Pod]{Verdict: ports.Allow()}, nil
	}
	if req.Object == nil {
		return ports.Mutation[corev1.Pod]{}, fmt.Errorf("annotate pod: %s %w", req.Operation, errNoObject)
	}
	current, present := req.Object.Annotations[PodAnnotationKey]
	if present && current == PodAnnotationValue {
		return ports.Mutation[corev1.Pod]{Verdict: ports.Allow()}, nil
	}
	var warnings []string
	if present {
		warnings = append(warnings, fmt.Sprintf("annotation %s was %q, set to %q", PodAnnotationKey, current, PodAnnotationValue))
	}
	// The rule changes metadata only, so the copy owns its metadata and
	// shares spec and status with the request, which nothing modifies:
	// copying a whole Pod for one annotation was most of the rule's cost.
	pod := &corev1.Pod{TypeMeta: req.Object.TypeMeta, Spec: req.Object.Spec, Status: req.Object.Status}
	req.Object.ObjectMeta.DeepCopyInto(&pod.ObjectMeta)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[PodAnnotationKey] = PodAnnotationValue
	return ports.Mutation[corev1.Pod]{Verdict: ports.Allow(warnings...), Object: pod}, nil
}

// PodValidator is the validating rule for Pods: it requires the annotation.
type PodValidator struct{}

var _ ports.Validator[corev1.Pod] = (*PodValidator)(nil)

// NewPodValidator returns the Pod validator.
func NewPodValidator() *PodValidator { return &PodValidator{} }

// Validate denies a created or updated Pod without the annotation, or
// with another value, and admits everything else.
func (*PodValidator) Validate(_ context.Context, req ports.AdmissionRequest[corev1.Pod]) (ports.Verdict, error) {
	if !createOrUpdate(req.Operation) {
		return ports.Allow(), nil
	}
	if req.Object == nil {
		return ports.Verdict{}, fmt.Errorf("validate pod: %s %w", req.Operation, errNoObject)
	}
	value, present := req.Object.Annotations[PodAnnotationKey]
	switch {
	case !present:
		return ports.Deny(fmt.Sprintf("missing annotation %s", PodAnnotationKey)), nil
	case value != PodAnnotationValue:
		return ports.Deny(fmt.Sprintf("annotation %s did not have value %q", PodAnnotationKey, PodAnnotationValue)), nil
	}
	return ports.Allow(), nil
}

func createOrUpdate(op ports.Operation) bool {
	return op == ports.OperationCreate || op == ports.OperationUpdate
}
