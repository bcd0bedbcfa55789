package e2e_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
)

// writeVerbs are the RBAC verbs that change what the API server stores,
// with the admission operation each reaches a policy as.
var writeVerbs = map[string]admissionregistrationv1.OperationType{
	"create":           admissionregistrationv1.Create,
	"update":           admissionregistrationv1.Update,
	"patch":            admissionregistrationv1.Update,
	"delete":           admissionregistrationv1.Delete,
	"deletecollection": admissionregistrationv1.Delete,
}

// writesNoPolicyConfines are the writes config/rbac grants the operator
// that no admission policy needs to confine, each with the decision.
// Every other write must be under a policy of config/policy.
var writesNoPolicyConfines = map[string]string{
	// --metrics-secure: the API server answers who a scrape's token is and
	// whether it may GET /metrics. A review is an answer: nothing is
	// stored, and the answer is about the request, not the operator.
	"create authentication.k8s.io/tokenreviews":        "a review stores nothing",
	"create authorization.k8s.io/subjectaccessreviews": "a review stores nothing",
}

// operatorMatch is the match condition that confines a policy to the
// operator's ServiceAccount, as config/default renders it.
const operatorMatch = "request.userInfo.username == 'system:serviceaccount:' + '" + operatorNamespace + "' + ':' + '" + operatorServiceAccount + "'"

// confiningPolicies are the policies of rendered that hold the operator's
// identity and nobody else's to their validations, whatever it writes:
// matched by the-operator condition, failing closed, and bound to deny
// with no narrower match than the policy's own.
func confiningPolicies(t *testing.T, rendered []map[string]any) map[string]admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	denying := map[string]bool{}
	for _, o := range rendered {
		if o["kind"] != "ValidatingAdmissionPolicyBinding" {
			continue
		}
		b := decodeAs[admissionregistrationv1.ValidatingAdmissionPolicyBinding](t, o)
		m := b.Spec.MatchResources
		narrowed := m != nil && (len(m.ResourceRules) > 0 || len(m.ExcludeResourceRules) > 0 || !matchesAll(m.NamespaceSelector) || !matchesAll(m.ObjectSelector))
		lenient := b.Spec.ParamRef != nil && ptrValue(b.Spec.ParamRef.ParameterNotFoundAction) != admissionregistrationv1.DenyAction
		if slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) && !narrowed && !lenient {
			denying[b.Spec.PolicyName] = true
		}
	}
	out := map[string]admissionregistrationv1.ValidatingAdmissionPolicy{}
	for _, o := range rendered {
		if o["kind"] != "ValidatingAdmissionPolicy" {
			continue
		}
		p := decodeAs[admissionregistrationv1.ValidatingAdmissionPolicy](t, o)
		operatorOnly := slices.ContainsFunc(p.Spec.MatchConditions, func(c admissionregistrationv1.MatchCondition) bool {
			return c.Name == "the-operator" && c.Expression == operatorMatch
		})
		if operatorOnly && ptrValue(p.Spec.FailurePolicy) == admissionregistrationv1.Fail && denying[p.Name] {
			out[p.Name] = p
		}
	}
	return out
}

// covers reports whether p's constraints match every request of op on
// group/resource (a subresource as "resource/sub"), in any namespace, on
// any object, in any version.
func covers(p admissionregistrationv1.ValidatingAdmissionPolicy, group, resource string, op admissionregistrationv1.OperationType) bool {
	mc := p.Spec.MatchConstraints
	if mc == nil || !matchesAll(mc.NamespaceSelector) || !matchesAll(mc.ObjectSelector) {
		return false
	}
	equivalent := ptrValue(mc.MatchPolicy) == admissionregistrationv1.Equivalent
	for _, r := range mc.ExcludeResourceRules {
		if ruleMatches(r.RuleWithOperations, group, resource, op, true) {
			return false
		}
	}
	for _, r := range mc.ResourceRules {
		if len(r.ResourceNames) == 0 && ruleMatches(r.RuleWithOperations, group, resource, op, equivalent) {
			return true
		}
	}
	return false
}

func ruleMatches(r admissionregistrationv1.RuleWithOperations, group, resource string, op admissionregistrationv1.OperationType, anyVersion bool) bool {
	res, sub, isSub := strings.Cut(resource, "/")
	var names []string
	if isSub {
		names = []string{resource, res + "/*", "*/" + sub, "*/*"}
	} else {
		names = []string{resource, "*"}
	}
	scope := ptrValue(r.Scope)
	return (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
		(anyVersion || slices.Contains(r.APIVersions, "*")) &&
		(slices.Contains(r.Operations, op) || slices.Contains(r.Operations, admissionregistrationv1.OperationAll)) &&
		slices.ContainsFunc(r.Resources, func(n string) bool { return slices.Contains(names, n) }) &&
		(scope == "" || scope == admissionregistrationv1.AllScopes)
}

func matchesAll(s *metav1.LabelSelector) bool {
	return s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0)
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func decodeAs[T any](t *testing.T, o map[string]any) T {
	t.Helper()
	data, err := json.Marshal(o)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// renderedIdentity is config/default's RBAC and policies, as maps.
func renderedIdentity(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range rbacOf(t) {
		out = append(out, o.Object)
	}
	return out
}

// Every write config/rbac grants the operator's ServiceAccount, as
// config/default renders it, is confined by an admission policy of
// config/policy (matched to that identity, failing closed, denying, over
// that resource and operation), or is one of writesNoPolicyConfines. A
// writing verb added to config/rbac without a policy over it fails here.
func TestEveryWriteOfTheOperatorIsUnderAPolicy(t *testing.T) {
	t.Parallel()
	rendered := renderedIdentity(t)
	policies := confiningPolicies(t, rendered)
	require.NotEmpty(t, policies)
	grants := grantsOf(t, rbacOf(t), rbacv1.Subject{Kind: "ServiceAccount", Name: operatorServiceAccount, Namespace: operatorNamespace})

	enumeration := map[string][]string{} // write → what covers it
	for _, g := range grants {
		op, writes := writeVerbs[g.verb]
		if !writes {
			continue
		}
		key := g.key()
		var by []string
		for name, p := range policies {
			if covers(p, g.group, g.resource, op) {
				by = append(by, name)
			}
		}
		sort.Strings(by)
		decision, decided := writesNoPolicyConfines[key]
		switch {
		case len(by) > 0 && decided:
			assert.Failf(t, "a decision for a confined write", "%s (granted by %s) is under %v and in writesNoPolicyConfines: drop the decision", key, g.from, by)
		case len(by) == 0 && !decided:
			assert.Failf(t, "a write no policy confines", "%s (granted by %s): add a policy to config/policy whose resourceRules cover it, or a commented decision to writesNoPolicyConfines", key, g.from)
		case decided:
			by = []string{"decision: " + decision}
		}
		enumeration[key] = by
	}
	for key := range writesNoPolicyConfines {
		assert.Contains(t, enumeration, key, "writesNoPolicyConfines names %q, which config/rbac does not grant", key)
	}
	keys := make([]string, 0, len(enumeration))
	for k := range enumeration {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-60s %s", k, strings.Join(enumeration[k], ", "))
	}
	// The writes the operator's job is made of are all found.
	assert.Subset(t, keys, []string{
		"create pods", "delete pods", "patch apps/replicasets", "create events.k8s.io/events", "patch events.k8s.io/events",
		"create coordination.k8s.io/leases", "update coordination.k8s.io/leases", "update chaosapps.metamagical.io/chaospods/status",
	})
}

// The Lease and Event policies speak of every field a write can set:
// each field of coordination.k8s.io/v1 LeaseSpec and of events.k8s.io/v1
// Event (Go types walked, so a field a future Kubernetes adds fails here
// until the policy says what it may hold), and the metadata that carries
// bytes or moves the garbage collector. The Event reasons are the
// domain's, and the ChaosPod Ready reasons api/chaos/v1's.
func TestLeaseAndEventPoliciesNameEveryField(t *testing.T) {
	t.Parallel()
	text := map[string]string{}
	for _, o := range renderedIdentity(t) {
		if o["kind"] != "ValidatingAdmissionPolicy" {
			continue
		}
		p := decodeAs[admissionregistrationv1.ValidatingAdmissionPolicy](t, o)
		var b strings.Builder
		for _, v := range p.Spec.Variables {
			b.WriteString(v.Expression + "\n")
		}
		for _, v := range p.Spec.Validations {
			b.WriteString(v.Expression + "\n")
		}
		text[strings.TrimPrefix(p.Name, "hexagonal-operator-")] = b.String()
	}
	metadata := []string{"labels", "annotations", "finalizers", "ownerReferences", "generateName"}
	tests := []struct {
		policy string
		fields []string
	}{
		{"leader-lease", append(jsonFields(reflect.TypeFor[coordinationv1.LeaseSpec]()), metadata...)},
		{"events", append(jsonFields(reflect.TypeFor[eventsv1.Event]()), metadata...)},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			t.Parallel()
			require.Contains(t, text, tt.policy)
			for _, f := range tt.fields {
				assert.Regexp(t, `\.\??`+f+`\b`, text[tt.policy], "%s does not say what %s may hold", tt.policy, f)
			}
		})
	}

	for _, reason := range []string{replicaset.ReasonLabeled, chaospod.ReasonPodCreated, chaospod.ReasonPodStopped,
		chaospod.ReasonPodCreateFailed, chaospod.ReasonPodNotControlled, chaospod.ReasonUpdateFailed} {
		assert.Contains(t, text["events"], "'"+reason+" ", "the events policy allows the domain's reason %s", reason)
	}
	for _, reason := range []string{chaosv1.ReasonPodRunning, chaosv1.ReasonPodPending, chaosv1.ReasonPodImagePullFailed, chaosv1.ReasonPodCrashLooping,
		chaosv1.ReasonPodNotReady, chaosv1.ReasonPodFailed, chaosv1.ReasonPodSucceeded,
		chaosv1.ReasonPodReplacing, chaosv1.ReasonPodCreateFailed, chaosv1.ReasonPodNotControlled} {
		assert.Contains(t, text["self-confinement"], "'"+reason+"'", "self-confinement allows the Ready reason %s", reason)
	}
}

// jsonFields are the JSON names of typ's fields, but its type and object
// metadata.
func jsonFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" || name == "-" || name == "metadata" {
			continue
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		panic(fmt.Sprintf("%s has no fields", typ))
	}
	return out
}
