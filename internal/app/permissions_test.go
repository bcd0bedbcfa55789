package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/app"
)

// rbacDir is config/rbac, seen from this package's folder.
var rbacDir = filepath.Join("..", "..", "config", "rbac")

// ruleGrant is one verb on one resource that a role of config/rbac grants.
type ruleGrant struct {
	verb, group, resource string
	names                 []string
	grantedBy             string // as kube.Access.GrantedBy spells it
	namespaced            bool   // a Role, not a ClusterRole
}

// grantsOfConfigRBAC reads the roles of config/rbac bound to the operator's
// ServiceAccount.
func grantsOfConfigRBAC(t *testing.T) []ruleGrant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rbacDir, "*.yaml"))
	require.NoError(t, err)
	type role struct {
		kind, name, file string
		rules            []rbacv1.PolicyRule
		aggregated       bool // for people, through a built-in role
	}
	var roles []role
	bound := map[string]bool{} // "Kind/name"
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var doc json.RawMessage
			if err := dec.Decode(&doc); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err, file)
			}
			var obj struct {
				Kind     string
				Metadata struct {
					Name   string
					Labels map[string]string
				}
				Rules    []rbacv1.PolicyRule
				RoleRef  rbacv1.RoleRef `json:"roleRef"`
				Subjects []rbacv1.Subject
			}
			require.NoError(t, json.Unmarshal(doc, &obj), file)
			switch obj.Kind {
			case "Role", "ClusterRole":
				aggregated := slices.ContainsFunc(slices.Collect(maps.Keys(obj.Metadata.Labels)), func(k string) bool {
					return strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-")
				})
				roles = append(roles, role{obj.Kind, obj.Metadata.Name, "config/rbac/" + filepath.Base(file), obj.Rules, aggregated})
			case "RoleBinding", "ClusterRoleBinding":
				if slices.ContainsFunc(obj.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" && s.Name == "controller-manager" }) {
					bound[obj.RoleRef.Kind+"/"+obj.RoleRef.Name] = true
				}
			}
		}
	}
	var out []ruleGrant
	for _, r := range roles {
		if r.aggregated {
			// The ChaosPod admin/editor/viewer roles: never the operator's.
			require.False(t, bound[r.kind+"/"+r.name], "%s %s aggregates into a built-in role and must not be bound to the operator", r.kind, r.name)
			continue
		}
		if !bound[r.kind+"/"+r.name] {
			continue // metrics-reader: for scrapers, not for the operator
		}
		for _, rule := range r.rules {
			for _, verb := range rule.Verbs {
				for _, group := range rule.APIGroups {
					for _, res := range rule.Resources {
						out = append(out, ruleGrant{
							verb: verb, group: group, resource: res, names: rule.ResourceNames,
							grantedBy:  fmt.Sprintf("%s %s in %s", r.kind, r.name, r.file),
							namespaced: r.kind == "Role",
						})
					}
				}
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

func (g ruleGrant) allows(a kube.Access) bool {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	return g.verb == a.Verb && g.group == a.Group && g.resource == res &&
		(len(g.names) == 0 || slices.Contains(g.names, a.Name)) &&
		g.namespaced == (a.Namespace != "")
}

// Every request the start-up check asks about (as config/manager runs
// the operator) is granted by config/rbac, by the role and file the error
// message names; and config/rbac grants nothing the check does not ask
// about.
func TestRBACGrantsExactlyWhatTheOperatorChecks(t *testing.T) {
	t.Parallel()
	grants := grantsOfConfigRBAC(t)
	wants, err := app.RequiredAccess(managerConfig(t))
	require.NoError(t, err)
	used := make([]bool, len(grants))
	for _, want := range wants {
		i := slices.IndexFunc(grants, func(g ruleGrant) bool { return g.allows(want) })
		if !assert.GreaterOrEqual(t, i, 0, "config/rbac does not grant %s", want) {
			continue
		}
		used[i] = true
		assert.Equal(t, grants[i].grantedBy, want.GrantedBy, "%s", want)
	}
	for i, g := range grants {
		assert.True(t, used[i], "%s grants %s %s/%s %v, which the start-up check never asks about", g.grantedBy, g.verb, g.group, g.resource, g.names)
	}
}

// Only what the enabled parts use is asked for.
func TestRequiredAccessFollowsTheConfiguration(t *testing.T) {
	t.Parallel()
	spell := func(args ...string) string {
		wants, err := app.RequiredAccess(parse(t, args...))
		require.NoError(t, err)
		var lines []string
		for _, a := range wants {
			lines = append(lines, a.String())
		}
		return strings.Join(lines, "\n")
	}
	minimal := spell("--controllers=replicaset", "--metrics-secure=false")
	assert.Contains(t, minimal, "patch apps/replicasets")
	assert.NotContains(t, minimal, "list chaosapps.metamagical.io/chaospods")
	assert.NotContains(t, minimal, "chaospods/status")
	assert.NotContains(t, minimal, "create pods")
	assert.NotContains(t, minimal, "leases")
	assert.NotContains(t, minimal, "secrets")
	assert.NotContains(t, minimal, "tokenreviews")
	assert.Contains(t, minimal, "get chaosapps.metamagical.io/chaospods", "the operator's Pod validator serves whatever the controllers")

	scoped := spell("--namespace=team", "--leader-elect", "--leader-election-id=another", "--leader-election-namespace=ops")
	assert.Contains(t, scoped, `list pods in namespace "team"`)
	assert.Contains(t, scoped, `update chaosapps.metamagical.io/chaospods/finalizers in namespace "team"`)
	assert.Contains(t, scoped, `get coordination.k8s.io/leases "another" in namespace "ops"`)
	assert.Contains(t, scoped, "create authentication.k8s.io/tokenreviews")

	self := spell("--webhook-cert-mode=self", "--mutating-webhook-configuration-name=m")
	assert.Contains(t, self, `update admissionregistration.k8s.io/mutatingwebhookconfigurations "m"`)
	assert.Contains(t, self, `watch apiextensions.k8s.io/customresourcedefinitions "chaospods.chaosapps.metamagical.io"`)
	assert.NotContains(t, spell("--controllers=", "--metrics-bind-address=0"), " pods")
}
