package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The annotation every Pod must carry.
const (
	podAnnotationKey   = "example-mutating-admission-webhook"
	podAnnotationValue = "foo"
)

// The path the builder generates for the Pod defaulter, which the raw
// mutator serves in its place.
const podMutatePath = "/mutate--v1-pod"

// setupPodWebhooks serves /mutate--v1-pod and /validate--v1-pod: the
// mutation through the typed defaulter, or through rawPodMutator when raw
// is set (the expert mode).
func setupPodWebhooks(mgr ctrl.Manager, raw bool) error {
	b := ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithValidator(&podValidator{})
	if !raw {
		return b.WithDefaulter(&podAnnotator{}).Complete()
	}
	if err := b.Complete(); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(podMutatePath, newRawPodMutator())
	return nil
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

// rawPodMutator is the Pod defaulter as a raw admission.Handler: it
// decodes only the request's annotations, not the whole Pod, and answers
// with one of four patches built once, where the typed defaulter decodes
// the Pod, copies it, encodes it again and diffs the two encodings. Its
// effect is podAnnotator's (pod_webhook_test.go holds them equal).
type rawPodMutator struct{}

// The JSON patches rawPodMutator answers with: metadata or the
// annotations added whole, the annotation added beside others, or another
// value replaced. The key needs no escaping in a JSON pointer.
var (
	patchAddMetadata    = mustMarshalPatch("add", "/metadata", map[string]any{"annotations": map[string]string{podAnnotationKey: podAnnotationValue}})
	patchAddAnnotations = mustMarshalPatch("add", "/metadata/annotations", map[string]string{podAnnotationKey: podAnnotationValue})
	patchAddAnnotation  = mustMarshalPatch("add", "/metadata/annotations/"+podAnnotationKey, podAnnotationValue)
	patchSetAnnotation  = mustMarshalPatch("replace", "/metadata/annotations/"+podAnnotationKey, podAnnotationValue)
)

func mustMarshalPatch(op, path string, value any) []byte {
	b, err := json.Marshal([]map[string]any{{"op": op, "path": path, "value": value}})
	if err != nil {
		panic(err)
	}
	return b
}

// newRawPodMutator is the webhook serving rawPodMutator. Its logger is the
// base one: the handler never logs, and the default constructor would add
// the request's fields to a logger for every request.
func newRawPodMutator() *webhook.Admission {
	return &webhook.Admission{
		Handler:        rawPodMutator{},
		LogConstructor: func(base logr.Logger, _ *admission.Request) logr.Logger { return base },
	}
}

// podAnnotations is what rawPodMutator decodes of a Pod; a nil Metadata
// or Annotations means the request has none.
type podAnnotations struct {
	Metadata *struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func (rawPodMutator) Handle(_ context.Context, req admission.Request) admission.Response {
	// As the typed defaulter: a deletion has nothing to default.
	if req.Operation == admissionv1.Delete {
		return admission.Allowed("")
	}
	var pod podAnnotations
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var patch []byte
	switch {
	case pod.Metadata == nil:
		patch = patchAddMetadata
	case pod.Metadata.Annotations == nil:
		patch = patchAddAnnotations
	default:
		switch value, ok := pod.Metadata.Annotations[podAnnotationKey]; {
		case !ok:
			patch = patchAddAnnotation
		case value != podAnnotationValue:
			patch = patchSetAnnotation
		default:
			return admission.Allowed("")
		}
	}
	pt := admissionv1.PatchTypeJSONPatch
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt}}
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
