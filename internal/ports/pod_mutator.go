package ports

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// PodMutator knows how to change a Pod on its way into the cluster (a
// mutating admission rule).
//
// MutatePod never modifies the request's objects. A returned error means the
// rule could not decide (it is reported as an internal error, and the API
// server applies the webhook's failure policy); a refusal is a denied
// [Mutation], not an error.
type PodMutator interface {
	MutatePod(ctx context.Context, req AdmissionRequest[corev1.Pod]) (Mutation[corev1.Pod], error)
}
