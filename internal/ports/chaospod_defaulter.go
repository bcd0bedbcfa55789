package ports

import (
	"context"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// ChaosPodDefaulter knows how to fill in the defaults of a ChaosPod on its
// way into the cluster (a mutating admission rule), in both served
// versions: the webhook for each version decodes to that version's type.
//
// The methods never modify the request's objects. A returned error means
// the rule could not decide; a refusal is a denied [Mutation].
type ChaosPodDefaulter interface {
	DefaultChaosPodV1(ctx context.Context, req AdmissionRequest[chaosv1.ChaosPod]) (Mutation[chaosv1.ChaosPod], error)
	DefaultChaosPodV2(ctx context.Context, req AdmissionRequest[chaosv2.ChaosPod]) (Mutation[chaosv2.ChaosPod], error)
}
