package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The annotation every Pod must carry.
const (
	podAnnotationKey   = "example-mutating-admission-webhook"
	podAnnotationValue = "foo"
)

// setupPodWebhooks serves /mutate--v1-pod and /validate--v1-pod.
func setupPodWebhooks(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithDefaulter(&podAnnotator{}).
		WithValidator(&podValidator{}).
		Complete()
}

// podAnnotator sets the annotation on created and updated Pods.
type podAnnotator struct{}

var _ admission.Defaulter[*corev1.Pod] = (*podAnnotator)(nil)

func (*podAnnotator) Default(_ context.Context, pod *corev1.Pod) error {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[podAnnotationKey] = podAnnotationValue
	return nil
}

// podValidator denies created and updated Pods without the annotation.
type podValidator struct{}

var _ admission.Validator[*corev1.Pod] = (*podValidator)(nil)

func (*podValidator) ValidateCreate(_ context.Context, pod *corev1.Pod) (admission.Warnings, error) {
	return nil, validatePod(pod)
}

func (*podValidator) ValidateUpdate(_ context.Context, _, pod *corev1.Pod) (admission.Warnings, error) {
	return nil, validatePod(pod)
}

func (*podValidator) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

func validatePod(pod *corev1.Pod) error {
	value, ok := pod.Annotations[podAnnotationKey]
	switch {
	case !ok:
		return fmt.Errorf("missing annotation %s", podAnnotationKey)
	case value != podAnnotationValue:
		return fmt.Errorf("annotation %s did not have value %q", podAnnotationKey, podAnnotationValue)
	}
	return nil
}
