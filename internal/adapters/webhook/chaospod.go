package webhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Paths of the ChaosPod hooks, as the README's Webhooks section lists them.
const (
	ChaosPodV1MutatePath   = "/mutate-chaosapps-metamagical-io-v1-chaospod"
	ChaosPodV1ValidatePath = "/validate-chaosapps-metamagical-io-v1-chaospod"
	ChaosPodV2MutatePath   = "/mutate-chaosapps-metamagical-io-v2-chaospod"
	ChaosPodV2ValidatePath = "/validate-chaosapps-metamagical-io-v2-chaospod"
)

// ChaosPod resources at each served version.
var (
	ChaosPodV1Resource = Resource{Kind: chaosv1.SchemeGroupVersion.WithKind(chaosv1.Kind), Resource: chaosv1.GroupVersionResource}
	ChaosPodV2Resource = Resource{Kind: chaosv2.SchemeGroupVersion.WithKind(chaosv1.Kind), Resource: chaosv2.GroupVersionResource}
)

func chaosPodRules(version string) []admissionregistrationv1.RuleWithOperations {
	scope := admissionregistrationv1.NamespacedScope
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{chaosv1.GroupName},
			APIVersions: []string{version},
			Resources:   []string{chaosv1.Resource},
			Scope:       &scope,
		},
	}}
}

// ChaosPodHooks is the registration table of the ChaosPod webhooks, one
// pair per served version.
//
// matchPolicy is Exact: with Equivalent, the API server would also send a
// v2 request to the v1 hooks (converted) and a v1 request to the v2 hooks,
// and the v2 defaulter would then give every v1 object a 10s interval,
// hiding v1's random 10s/20s. Each version's rules apply to its own
// requests only. Status writes go to chaospods/status, which the rules do
// not match, so the reconciler's status updates skip admission. The hooks
// fail closed: an unchecked nextStop is what validation exists to prevent.
func ChaosPodHooks(defaulter ports.ChaosPodDefaulter, validator ports.ChaosPodValidator) []Hook {
	hook := func(name, path string, t HookType, a Admitter, version string) Hook {
		h := Hook{
			Name:           name,
			Path:           path,
			Type:           t,
			Admitter:       a,
			Rules:          chaosPodRules(version),
			FailurePolicy:  admissionregistrationv1.Fail,
			MatchPolicy:    admissionregistrationv1.Exact,
			SideEffects:    admissionregistrationv1.SideEffectClassNone,
			TimeoutSeconds: 10,
		}
		if t == MutatingHook {
			h.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
		}
		return h
	}
	return []Hook{
		hook("chaospod-v1-defaulter.hexagonal-operator.io", ChaosPodV1MutatePath, MutatingHook,
			Mutating(ChaosPodV1Resource, defaulter.DefaultChaosPodV1), "v1"),
		hook("chaospod-v1-validator.hexagonal-operator.io", ChaosPodV1ValidatePath, ValidatingHook,
			Validating(ChaosPodV1Resource, validator.ValidateChaosPodV1), "v1"),
		hook("chaospod-v2-defaulter.hexagonal-operator.io", ChaosPodV2MutatePath, MutatingHook,
			Mutating(ChaosPodV2Resource, defaulter.DefaultChaosPodV2), "v2"),
		hook("chaospod-v2-validator.hexagonal-operator.io", ChaosPodV2ValidatePath, ValidatingHook,
			Validating(ChaosPodV2Resource, validator.ValidateChaosPodV2), "v2"),
	}
}
