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

// OperatorPodValidator is the validating rule for the Pods the operator
// itself creates (its webhook is matched for the operator's identity
// only): a created Pod's controller must be a ChaosPod that exists in the
// Pod's namespace with the name and UID the owner reference gives, and is
// not being deleted. The admission policies check the Pod against that
// ChaosPod's template, but no policy can require that the ChaosPod exists
// when the namespace holds others; this rule does.
type OperatorPodValidator struct {
	chaosPods ports.Reader[*chaosv1.ChaosPod]
}

var _ ports.Validator[*corev1.Pod] = (*OperatorPodValidator)(nil)

// NewOperatorPodValidator returns the rule, reading ChaosPods from
// chaosPods.
func NewOperatorPodValidator(chaosPods ports.Reader[*chaosv1.ChaosPod]) (*OperatorPodValidator, error) {
	if chaosPods == nil {
		return nil, errors.New("operator pod validator: a chaospod reader is required")
	}
	return &OperatorPodValidator{chaosPods: chaosPods}, nil
}

// ValidateCreate refuses a Pod whose controller is not an existing
// ChaosPod of that UID, not being deleted.
//
// The reader is a cache: a ChaosPod created a moment ago may not be in
// this replica's yet. That is refused too (the chaospod controller retries
// the create), since admitting on a miss is the gap the rule closes.
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
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return nil, ports.Denied(fmt.Sprintf(operatorPodDenied+"ChaosPod %s does not exist (or this replica has not seen it yet; the operator retries)", key))
	case err != nil:
		return nil, fmt.Errorf("validate operator pod: get chaospod %s: %w", key, err)
	case cp.UID != ref.UID:
		return nil, ports.Denied(fmt.Sprintf(operatorPodDenied+"ChaosPod %s has UID %s, the Pod's owner reference names %s (or this replica has not seen it yet; the operator retries)",
			key, cp.UID, ref.UID))
	case cp.DeletionTimestamp != nil:
		return nil, ports.Denied(fmt.Sprintf(operatorPodDenied+"ChaosPod %s is being deleted", key))
	}
	return nil, nil
}

// ValidateUpdate admits every update: the rule is registered for creates.
func (*OperatorPodValidator) ValidateUpdate(context.Context, *corev1.Pod, *corev1.Pod) (ports.Warnings, error) {
	return nil, nil
}

// ValidateDelete admits every deletion.
func (*OperatorPodValidator) ValidateDelete(context.Context, *corev1.Pod) (ports.Warnings, error) {
	return nil, nil
}
