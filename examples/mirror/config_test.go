package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/operatortest"
)

// config/ is what `mirror manifests` renders, as `make manifests` runs it:
// the example's controller alone (--controllers=).
func TestConfigIsWhatTheWiringNeeds(t *testing.T) {
	t.Parallel()
	files := operatortest.RequireGeneratedConfig(t, "mirror", "config", mirrors, "--controllers=")

	// The two watches of one kind make one rule: For's writes, and the
	// finalizers its controller references need, though Owns offers
	// neither reader nor writer.
	var role rbacv1.ClusterRole
	for _, f := range files {
		if f.Path != "rbac/role.yaml" {
			continue
		}
		for doc := range strings.SplitSeq(string(f.Content), "\n---\n") {
			if strings.Contains(doc, "\nkind: ClusterRole\n") {
				require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &role))
			}
		}
	}
	require.Equal(t, "manager-role", role.Name)
	verbs := map[string][]string{}
	for _, r := range role.Rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "" {
			for _, res := range r.Resources {
				verbs[res] = append(verbs[res], r.Verbs...)
			}
		}
	}
	assert.Equal(t, map[string][]string{
		"configmaps":            {"list", "watch", "create", "update", "delete"},
		"configmaps/finalizers": {"update"},
	}, verbs)
}
