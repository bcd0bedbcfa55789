package mirror

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// MaxKeys is the most keys, data and binaryData together, a labelled
// ConfigMap may have: each is copied, so a mirror doubles what it holds.
const MaxKeys = 10

// Validator is the validating rule for ConfigMaps: one labelled
// [Label]=true has at most [MaxKeys] keys. Build it with NewValidator.
type Validator struct{}

var _ ports.Validator[*corev1.ConfigMap] = (*Validator)(nil)

// NewValidator returns the validator.
func NewValidator() *Validator { return &Validator{} }

// ValidateCreate refuses a labelled ConfigMap with more than [MaxKeys]
// keys. It admits an unlabelled one: the webhook's object selector should
// keep those from it, but the rule does not count on how it is
// registered.
func (*Validator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (ports.Warnings, error) {
	if !Labelled(cm) {
		return nil, nil
	}
	if n := len(cm.Data) + len(cm.BinaryData); n > MaxKeys {
		return nil, ports.Denied(fmt.Sprintf("a ConfigMap labelled %s=true has at most %d keys in data and binaryData, this one has %d", Label, MaxKeys, n))
	}
	return nil, nil
}

// ValidateUpdate checks the new ConfigMap, as ValidateCreate does: an
// update that removes the label is admitted whatever it holds.
func (v *Validator) ValidateUpdate(ctx context.Context, _, cm *corev1.ConfigMap) (ports.Warnings, error) {
	return v.ValidateCreate(ctx, cm)
}

// ValidateDelete admits every deletion (the webhook is not registered for
// them).
func (*Validator) ValidateDelete(context.Context, *corev1.ConfigMap) (ports.Warnings, error) {
	return nil, nil
}
