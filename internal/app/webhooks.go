package app

import (
	"context"
	"errors"

	"go.uber.org/fx"
	"go.uber.org/zap"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The admission webhooks the operator serves are registered here, each in
// one line, as an extension registers its own (extend.go): the webhook
// server mounts each row's rule at its path, config/webhook is generated
// from (and tested against) the same rows, and nothing else knows a path
// or a rule. A new rule for a kind below is one type in the domain and one
// line here.

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

// PodResource is what the Pod hooks serve.
var PodResource = webhook.Resource{
	Kind:     corev1.SchemeGroupVersion.WithKind("Pod"),
	Resource: corev1.SchemeGroupVersion.WithResource("pods"),
}

// ExcludedNamespaces never reach the Pod hooks that see everyone's Pods:
// the cluster's own namespaces, and the operator's, so the operator can
// always start even when its webhook cannot answer (no chicken and egg).
// The names are literal because kustomize does not rewrite selector
// values. The operator's Pod validator sees only the operator's own Pods
// and leaves no namespace out.
func ExcludedNamespaces() []string {
	return []string{"kube-system", "kube-public", "kube-node-lease", OperatorNamespace}
}

// userPods confines a Pod hook to the Pods of every namespace but
// [ExcludedNamespaces].
func userPods(h *webhook.Hook) {
	h.MatchPolicy = admissionregistrationv1.Equivalent
	h.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key:      "kubernetes.io/metadata.name",
		Operator: metav1.LabelSelectorOpNotIn,
		Values:   ExcludedNamespaces(),
	}}}
}

// PodWebhooks are the Pod rules.
//
// Both fail closed: the validator denies a Pod without the annotation, so
// if the annotator were skipped on failure the Pod would be denied anyway,
// with a misleading message; failing says what happened. [userPods] keeps
// the blast radius of an unavailable webhook to user namespaces. The
// annotator is re-invoked if a later mutating webhook changes the Pod
// (setting the annotation is idempotent), so a webhook that drops
// annotations does not make the validator deny. Both read one annotation,
// so neither decodes more than the Pod's metadata.
var PodWebhooks = fx.Options(
	Mutating[corev1.Pod](PodResource.Resource, admission.NewPodAnnotator, Named("pod-annotator.hexagonal-operator.io"), userPods, reinvoked, ReadsMetadataOnly()),
	Validating[corev1.Pod](PodResource.Resource, admission.NewPodValidator, Named("pod-validator.hexagonal-operator.io"), userPods, ReadsMetadataOnly()),
)

func reinvoked(h *webhook.Hook) {
	h.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
}

// OperatorPodWebhooks is the rule for the Pods the operator itself
// creates; it needs a ports.Reader of ChaosPods that reads the API server
// (chaosPodOptions gives it one), and logs, when it is given a logger, the
// precise reason of each refusal at debug level, which the client is never
// told.
//
// Its match condition restricts it to the operator's ServiceAccount, so
// it never refuses, nor delays, anyone else's Pod: if no replica answers,
// only the operator's own Pod creates fail (closed), and the chaospod
// controller retries them. So, unlike the other Pod hooks, it needs no
// namespace left out, and leaves none out: where it did, a Pod naming a
// ChaosPod that does not exist passed in those namespaces (kube-system
// among them) once they held any ChaosPod.
var OperatorPodWebhooks = Validating[corev1.Pod](PodResource.Resource, newOperatorPodValidator,
	Named("operator-pod-validator.hexagonal-operator.io"), At(OperatorPodValidatePath), Operations(admissionregistrationv1.Create), equivalent, operatorOnly, ReadsMetadataOnly())

type operatorPodParams struct {
	fx.In
	ChaosPods ports.Reader[*chaosv1.ChaosPod]
	Logger    *zap.Logger `optional:"true"`
}

func newOperatorPodValidator(p operatorPodParams) (*refusalLog, error) {
	v, err := admission.NewOperatorPodValidator(p.ChaosPods)
	if err != nil {
		return nil, err
	}
	log := zap.NewNop()
	if p.Logger != nil {
		log = p.Logger.Named("operator-pod-validator")
	}
	return &refusalLog{Validator: v, log: log}, nil
}

// refusalLog logs the whole error of each refusal at debug level: the
// domain wraps the words the client reads, the same for every missing,
// replaced or departing ChaosPod, with the reason, which only the
// operator's log may tell.
type refusalLog struct {
	ports.Validator[*corev1.Pod]
	log *zap.Logger
}

func (r *refusalLog) ValidateCreate(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	warnings, err := r.Validator.ValidateCreate(ctx, pod)
	var denied *ports.DeniedError
	if errors.As(err, &denied) && err.Error() != denied.Message {
		r.log.Debug("operator pod refused", zap.String("namespace", pod.Namespace), zap.String("name", pod.Name), zap.Error(err))
	}
	return warnings, err
}

func equivalent(h *webhook.Hook) { h.MatchPolicy = admissionregistrationv1.Equivalent }

func operatorOnly(h *webhook.Hook) {
	h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: OperatorMatchCondition, Expression: operatorUsername}}
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
var ChaosPodWebhooks = fx.Options(
	Mutating[chaosv1.ChaosPod](chaosv1.GroupVersionResource, admission.NewChaosPodV1Defaulter, Named("chaospod-v1-defaulter.hexagonal-operator.io")),
	Validating[chaosv1.ChaosPod](chaosv1.GroupVersionResource, admission.NewChaosPodV1Validator, Named("chaospod-v1-validator.hexagonal-operator.io")),
	Mutating[chaosv2.ChaosPod](chaosv2.GroupVersionResource, admission.NewChaosPodV2Defaulter, Named("chaospod-v2-defaulter.hexagonal-operator.io")),
	Validating[chaosv2.ChaosPod](chaosv2.GroupVersionResource, admission.NewChaosPodV2Validator, Named("chaospod-v2-validator.hexagonal-operator.io")),
)

// ChaosPodConversion is the ChaosPod CRD's conversion endpoint, through v1
// as the hub.
func ChaosPodConversion() webhook.Conversion {
	return webhook.Conversion{Path: ConvertPath, CRD: ChaosPodCRDName, Convert: func(_ context.Context, raw []byte, desired string) ([]byte, error) {
		return chaosv2.ConvertJSON(raw, desired)
	}}
}
