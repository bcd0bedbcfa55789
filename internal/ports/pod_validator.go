package ports

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// PodValidator knows how to decide whether a Pod may enter (or change in) the
// cluster (a validating admission rule).
//
// ValidatePod never modifies the request's objects. A returned error means
// the rule could not decide; a refusal is a [Verdict] with Allowed false.
type PodValidator interface {
	ValidatePod(ctx context.Context, req AdmissionRequest[corev1.Pod]) (Verdict, error)
}
