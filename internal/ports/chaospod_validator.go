package ports

import (
	"context"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// ChaosPodValidator knows how to decide whether a ChaosPod may enter (or
// change in) the cluster (a validating admission rule), in both served
// versions.
//
// The methods never modify the request's objects. A returned error means
// the rule could not decide; a refusal is a [Verdict] with Allowed false.
type ChaosPodValidator interface {
	ValidateChaosPodV1(ctx context.Context, req AdmissionRequest[chaosv1.ChaosPod]) (Verdict, error)
	ValidateChaosPodV2(ctx context.Context, req AdmissionRequest[chaosv2.ChaosPod]) (Verdict, error)
}
