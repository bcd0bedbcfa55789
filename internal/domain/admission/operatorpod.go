package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// operatorPodDenied starts every denial of [OperatorPodValidator].
const operatorPodDenied = "the operator may only create Pods of an existing ChaosPod: "

// operatorPodRefused is the one answer for every Pod whose ChaosPod the
// API server does not hold as the Pod names it (missing, another UID,
// being deleted). It says which of these it was to no one: the webhook
// server answers whoever reaches it, and a precise answer would tell any
// client which ChaosPods exist and with what UID.
const operatorPodRefused = operatorPodDenied +
	"the Pod's controller must be a ChaosPod of its namespace with the name and UID its owner reference gives, not being deleted"

// OperatorPodValidator is the validating rule for the Pods the operator
// itself creates (its webhook is matched for the operator's identity
// only, in every namespace): a created Pod's controller must be a ChaosPod
// that exists in the Pod's namespace with the name and UID the owner
// reference gives, and is not being deleted. The admission policies check
// the Pod against that ChaosPod's template, but no policy can require
// that the ChaosPod exists when the namespace holds others; this rule
// does.
type OperatorPodValidator struct {
	chaosPods ports.Reader[*chaosv1.ChaosPod]
}

var _ ports.Validator[*corev1.Pod] = (*OperatorPodValidator)(nil)

// NewOperatorPodValidator returns the rule, reading ChaosPods from
// chaosPods. That reader must answer from the API server's current state,
// not from a cache: a cache may still hold a ChaosPod deleted a moment
// ago, and the rule admits on what it reads.
func NewOperatorPodValidator(chaosPods ports.Reader[*chaosv1.ChaosPod]) (*OperatorPodValidator, error) {
	if chaosPods == nil {
		return nil, errors.New("operator pod validator: a chaospod reader is required")
	}
	return &OperatorPodValidator{chaosPods: chaosPods}, nil
}

// ValidateCreate refuses a Pod whose controller is not an existing
// ChaosPod of that UID, not being deleted. Every such refusal carries the
// same message; the error wraps it with the precise reason, for the
// operator's own log.
func (v *OperatorPodValidator) ValidateCreate(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	namespace := pod.Namespace
	if namespace == "" {
		req, _ := ports.AdmissionRequestFromContext(ctx)
		namespace = req.Namespace
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return nil, ports.Denied(operatorPodDenied + "the Pod has no controller owner reference")
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != chaosv1.GroupName || ref.Kind != chaosv1.Kind {
		return nil, ports.Denied(fmt.Sprintf(operatorPodDenied+"the Pod's controller is %s %s %q, not a %s",
			ref.APIVersion, ref.Kind, ref.Name, chaosv1.GroupKind))
	}
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	cp, err := v.chaosPods.Get(ctx, key)
	var reason string
	switch {
	case errors.Is(err, ports.ErrNotFound):
		reason = "does not exist"
	case err != nil:
		return nil, fmt.Errorf("validate operator pod: get chaospod %s: %w", key, err)
	case cp.UID != ref.UID:
		reason = fmt.Sprintf("has UID %s, the Pod's owner reference names %s", cp.UID, ref.UID)
	case cp.DeletionTimestamp != nil:
		reason = "is being deleted"
	default:
		return nil, nil
	}
	return nil, fmt.Errorf("validate operator pod: chaospod %s %s: %w", key, reason, ports.Denied(operatorPodRefused))
}

// ValidateUpdate admits every update: the rule is registered for creates.
func (*OperatorPodValidator) ValidateUpdate(context.Context, *corev1.Pod, *corev1.Pod) (ports.Warnings, error) {
	return nil, nil
}

// ValidateDelete admits every deletion.
func (*OperatorPodValidator) ValidateDelete(context.Context, *corev1.Pod) (ports.Warnings, error) {
	return nil, nil
}
