package webhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// HookType says which webhook configuration a hook belongs in.
type HookType string

// Hook types.
const (
	MutatingHook   HookType = "Mutating"
	ValidatingHook HookType = "Validating"
)

// Hook is one row of the registration table: the server mounts Admitter
// at Path, and the same row renders the webhook's configuration entry.
// [Mutating] and [Validating] set Type and Admitter.
type Hook struct {
	Name     string // unique within its configuration
	Path     string // also the `webhook` metric label
	Type     HookType
	Admitter Admitter

	// Resource and Operations are the webhook's rule, on a namespaced
	// resource; the admitter answers no other.
	Resource      Resource
	Operations    []admissionregistrationv1.OperationType
	FailurePolicy admissionregistrationv1.FailurePolicyType
	MatchPolicy   admissionregistrationv1.MatchPolicyType
	SideEffects   admissionregistrationv1.SideEffectClass
	// TimeoutSeconds is how long the API server waits; the rule's context
	// gets the same deadline.
	TimeoutSeconds    int32
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	MatchConditions   []admissionregistrationv1.MatchCondition
	// ReinvocationPolicy applies to mutating hooks only.
	ReinvocationPolicy admissionregistrationv1.ReinvocationPolicyType
	// MetadataOnly says the rule reads the object's metadata alone (names,
	// labels, annotations, owner references): the admitter decodes nothing
	// else, which is most of the cost of a large object, and a defaulter
	// that changes anything else is answered with an error rather than a
	// patch of fields it never saw. Set it before Mutating or Validating.
	MetadataOnly bool
}

// validate checks the registration and returns every path served.
func validate(hooks []Hook, conversions []Conversion) ([]string, error) {
	var errs []error
	var paths []string
	checkPath := func(what, path string) {
		switch {
		case !strings.HasPrefix(path, "/"):
			errs = append(errs, fmt.Errorf("%s: path must start with /", what))
		case slices.Contains(paths, path):
			errs = append(errs, fmt.Errorf("%s: path served twice", what))
		}
		paths = append(paths, path)
	}
	names := map[HookType]map[string]bool{MutatingHook: {}, ValidatingHook: {}}
	for i, h := range hooks {
		what := fmt.Sprintf("hook %d (%s)", i, h.Path)
		checkPath(what, h.Path)
		if h.Admitter == nil {
			errs = append(errs, fmt.Errorf("%s: no admitter", what))
		} else if c, ok := h.Admitter.(interface{ check() error }); ok {
			if err := c.check(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
			}
		}
		if len(h.Operations) == 0 {
			errs = append(errs, fmt.Errorf("%s: no operations", what))
		}
		seen, ok := names[h.Type]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: type %q (want %s or %s)", what, h.Type, MutatingHook, ValidatingHook))
		case h.Name == "" || seen[h.Name]:
			errs = append(errs, fmt.Errorf("%s: name %q empty or used twice", what, h.Name))
		default:
			seen[h.Name] = true
		}
		if h.TimeoutSeconds < 1 || h.TimeoutSeconds > 30 {
			errs = append(errs, fmt.Errorf("%s: timeoutSeconds %d outside 1..30", what, h.TimeoutSeconds))
		}
	}
	for i, c := range conversions {
		what := fmt.Sprintf("conversion %d (%s)", i, c.Path)
		checkPath(what, c.Path)
		if c.Convert == nil {
			errs = append(errs, fmt.Errorf("%s: no convert function", what))
		}
	}
	return paths, errors.Join(errs...)
}

// ServiceRef is the Service through which the API server reaches the
// server; Port 0 is left out (443).
type ServiceRef struct {
	Namespace, Name string
	Port            int32
}

func (s ServiceRef) clientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	ref := &admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: &path}
	if s.Port != 0 {
		ref.Port = &s.Port
	}
	return admissionregistrationv1.WebhookClientConfig{Service: ref}
}

// MutatingWebhookConfiguration renders the mutating rows of hooks.
func MutatingWebhookConfiguration(name string, svc ServiceRef, hooks []Hook) *admissionregistrationv1.MutatingWebhookConfiguration {
	out := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	for _, h := range rows(hooks, MutatingHook) {
		w := h.webhook(svc)
		out.Webhooks = append(out.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules,
			FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds,
			NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, MatchConditions: w.MatchConditions,
			AdmissionReviewVersions: w.AdmissionReviewVersions, ReinvocationPolicy: ptrOrNil(h.ReinvocationPolicy),
		})
	}
	return out
}

// ValidatingWebhookConfiguration renders the validating rows of hooks.
func ValidatingWebhookConfiguration(name string, svc ServiceRef, hooks []Hook) *admissionregistrationv1.ValidatingWebhookConfiguration {
	out := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	for _, h := range rows(hooks, ValidatingHook) {
		out.Webhooks = append(out.Webhooks, h.webhook(svc))
	}
	return out
}

// webhook is the row's configuration entry; a mutating one adds its
// reinvocation policy.
func (h Hook) webhook(svc ServiceRef) admissionregistrationv1.ValidatingWebhook {
	r := h.Resource.Resource
	return admissionregistrationv1.ValidatingWebhook{
		Name:                    h.Name,
		ClientConfig:            svc.clientConfig(h.Path),
		FailurePolicy:           ptrOrNil(h.FailurePolicy),
		MatchPolicy:             ptrOrNil(h.MatchPolicy),
		NamespaceSelector:       h.NamespaceSelector,
		ObjectSelector:          h.ObjectSelector,
		SideEffects:             ptrOrNil(h.SideEffects),
		TimeoutSeconds:          ptrOrNil(h.TimeoutSeconds),
		AdmissionReviewVersions: []string{"v1"},
		MatchConditions:         h.MatchConditions,
		Rules: []admissionregistrationv1.RuleWithOperations{{Operations: h.Operations, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{r.Group}, APIVersions: []string{r.Version}, Resources: []string{r.Resource},
			Scope: ptr.To(admissionregistrationv1.NamespacedScope),
		}}},
	}
}

// rows are the hooks of type t ordered by path, which an fx group gives in
// no particular order.
func rows(hooks []Hook, t HookType) []Hook {
	hooks = slices.DeleteFunc(slices.Clone(hooks), func(h Hook) bool { return h.Type != t })
	slices.SortFunc(hooks, func(a, b Hook) int { return strings.Compare(a.Path, b.Path) })
	return hooks
}

func ptrOrNil[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
