package app

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The admission rules the operator serves, one row each. The webhook
// server mounts each row's admitter at its path, config/webhook is
// generated from (and tested against) the same rows, and nothing else
// knows a path or a rule: adding a rule for a kind below is one function in
// the domain and one row here.

// Paths of the webhooks, as config/webhook names them.
const (
	PodMutatePath          = "/mutate--v1-pod"
	PodValidatePath        = "/validate--v1-pod"
	ChaosPodV1MutatePath   = "/mutate-chaosapps-metamagical-io-v1-chaospod"
	ChaosPodV1ValidatePath = "/validate-chaosapps-metamagical-io-v1-chaospod"
	ChaosPodV2MutatePath   = "/mutate-chaosapps-metamagical-io-v2-chaospod"
	ChaosPodV2ValidatePath = "/validate-chaosapps-metamagical-io-v2-chaospod"
	// OperatorPodValidatePath checks the Pods the operator itself creates.
	OperatorPodValidatePath = "/validate-operator--v1-pod"
	// ConvertPath is where the ChaosPod CRD's conversion webhook calls.
	ConvertPath = "/convert"
)

// ChaosPodCRDName is the ChaosPod CRD's name.
const ChaosPodCRDName = chaosv1.Resource + "." + chaosv1.GroupName

// OperatorNamespace is where config/default deploys the operator.
const OperatorNamespace = "hexagonal-operator-system"

// Resources the hooks serve: the kind of object in a request and the
// resource it was sent for.
var (
	PodResource = webhook.Resource{
		Kind:     corev1.SchemeGroupVersion.WithKind("Pod"),
		Resource: corev1.SchemeGroupVersion.WithResource("pods"),
	}
	ChaosPodV1Resource = webhook.Resource{Kind: chaosv1.SchemeGroupVersion.WithKind(chaosv1.Kind), Resource: chaosv1.GroupVersionResource}
	ChaosPodV2Resource = webhook.Resource{Kind: chaosv2.SchemeGroupVersion.WithKind(chaosv1.Kind), Resource: chaosv2.GroupVersionResource}
)

// ExcludedNamespaces never reach the Pod hooks: the cluster's own
// namespaces, and the operator's, so the operator can always start even
// when its webhook cannot answer (no chicken and egg). The names are
// literal because kustomize does not rewrite selector values.
func ExcludedNamespaces() []string {
	return []string{"kube-system", "kube-public", "kube-node-lease", OperatorNamespace}
}

// podNamespaces selects every namespace but [ExcludedNamespaces], for
// every hook on Pods.
func podNamespaces() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key:      "kubernetes.io/metadata.name",
		Operator: metav1.LabelSelectorOpNotIn,
		Values:   ExcludedNamespaces(),
	}}}
}

// PodWebhooks are the Pod rules.
//
// Both fail closed (failurePolicy Fail): the validator denies a Pod without
// the annotation, so if the mutator were skipped on failure the Pod would be
// denied anyway, with a misleading message; failing says what happened.
// The namespace selector keeps the blast radius of an unavailable webhook
// to user namespaces. The mutator is re-invoked if a later mutating webhook
// changes the Pod (setting the annotation is idempotent), so a webhook that
// drops annotations does not make the validator deny.
func PodWebhooks() []webhook.Hook {
	pods := func(h webhook.Hook) webhook.Hook {
		h.Rules = createOrUpdate(PodResource.Resource)
		h.MatchPolicy = admissionregistrationv1.Equivalent
		h.NamespaceSelector = podNamespaces()
		return h
	}
	return []webhook.Hook{
		pods(mutating("pod-annotator.hexagonal-operator.io", PodMutatePath,
			webhook.Mutating[corev1.Pod](PodResource, admission.NewPodAnnotator()),
			admissionregistrationv1.IfNeededReinvocationPolicy)),
		pods(validating("pod-validator.hexagonal-operator.io", PodValidatePath,
			webhook.Validating[corev1.Pod](PodResource, admission.NewPodValidator()))),
	}
}

// OperatorPodWebhooks is the rule for the Pods the operator itself
// creates: each names, as its controller, a ChaosPod that exists with that
// UID. The admission policies of config/policy check such a Pod against
// its ChaosPod's template, but no policy can require that the ChaosPod
// exists while the namespace holds others.
//
// Its match condition restricts it to the operator's ServiceAccount, so
// it never refuses, nor delays, anyone else's Pod: if no replica answers,
// only the operator's own Pod creates fail (closed), and the chaospod
// controller retries them. It leaves out the namespaces every Pod hook
// leaves out; there chaospod-templates still refuses a Pod while the
// namespace holds no ChaosPod.
func OperatorPodWebhooks(v *admission.OperatorPodValidator) []webhook.Hook {
	h := validating("operator-pod-validator.hexagonal-operator.io", OperatorPodValidatePath,
		webhook.Validating[corev1.Pod](PodResource, v))
	scope := admissionregistrationv1.NamespacedScope
	h.Rules = []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{PodResource.Resource.Group},
			APIVersions: []string{PodResource.Resource.Version},
			Resources:   []string{PodResource.Resource.Resource},
			Scope:       &scope,
		},
	}}
	h.MatchPolicy = admissionregistrationv1.Equivalent
	h.NamespaceSelector = podNamespaces()
	h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: OperatorMatchCondition, Expression: operatorUsername}}
	return []webhook.Hook{h}
}

// OperatorMatchCondition names the match condition that restricts a
// webhook (and each admission policy of config/policy) to the operator's
// ServiceAccount.
const OperatorMatchCondition = "the-operator"

// operatorUsername is that condition's expression with kustomize's base
// names (namespace "system", ServiceAccount "controller-manager"), split
// so that config/default can replace each one, by its position between
// the quotes, with what it deploys.
const operatorUsername = "request.userInfo.username == 'system:serviceaccount:' + 'system' + ':' + 'controller-manager'"

// ChaosPodWebhooks are the ChaosPod rules, for each served version. They
// match versions exactly: each version has its own rule, and the API server
// must not convert a request to the other one.
func ChaosPodWebhooks(d *admission.ChaosPodDefaulter, v *admission.ChaosPodValidator) []webhook.Hook {
	v1, v2 := ChaosPodV1Resource.Resource, ChaosPodV2Resource.Resource
	never := admissionregistrationv1.NeverReinvocationPolicy
	return []webhook.Hook{
		exact(mutating("chaospod-v1-defaulter.hexagonal-operator.io", ChaosPodV1MutatePath,
			webhook.Mutating(ChaosPodV1Resource, ports.MutatorFunc[chaosv1.ChaosPod](d.DefaultV1)), never), v1),
		exact(validating("chaospod-v1-validator.hexagonal-operator.io", ChaosPodV1ValidatePath,
			webhook.Validating(ChaosPodV1Resource, ports.ValidatorFunc[chaosv1.ChaosPod](v.ValidateV1))), v1),
		exact(mutating("chaospod-v2-defaulter.hexagonal-operator.io", ChaosPodV2MutatePath,
			webhook.Mutating(ChaosPodV2Resource, ports.MutatorFunc[chaosv2.ChaosPod](d.DefaultV2)), never), v2),
		exact(validating("chaospod-v2-validator.hexagonal-operator.io", ChaosPodV2ValidatePath,
			webhook.Validating(ChaosPodV2Resource, ports.ValidatorFunc[chaosv2.ChaosPod](v.ValidateV2))), v2),
	}
}

// ChaosPodConversion is the ChaosPod CRD's conversion endpoint, through v1
// as the hub.
func ChaosPodConversion() webhook.Conversion {
	return webhook.Conversion{Path: ConvertPath, Convert: func(_ context.Context, raw []byte, desired string) ([]byte, error) {
		return chaosv2.ConvertJSON(raw, desired)
	}}
}

// mutating and validating are the defaults every hook here shares: it fails
// closed, has no side effects, and gets 10 seconds.
func mutating(name, path string, a webhook.Admitter, reinvocation admissionregistrationv1.ReinvocationPolicyType) webhook.Hook {
	h := validating(name, path, a)
	h.Type = webhook.MutatingHook
	h.ReinvocationPolicy = reinvocation
	return h
}

func validating(name, path string, a webhook.Admitter) webhook.Hook {
	return webhook.Hook{
		Name:           name,
		Path:           path,
		Type:           webhook.ValidatingHook,
		Admitter:       a,
		FailurePolicy:  admissionregistrationv1.Fail,
		SideEffects:    admissionregistrationv1.SideEffectClassNone,
		TimeoutSeconds: 10,
	}
}

// createOrUpdate sends creates and updates of a namespaced resource (not
// its subresources).
func createOrUpdate(r schema.GroupVersionResource) []admissionregistrationv1.RuleWithOperations {
	scope := admissionregistrationv1.NamespacedScope
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{r.Group},
			APIVersions: []string{r.Version},
			Resources:   []string{r.Resource},
			Scope:       &scope,
		},
	}}
}
