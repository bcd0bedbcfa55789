package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
)

// reviewer answers SelfSubjectAccessReviews: allowed unless deny says no.
func reviewer(deny func(authorizationv1.ResourceAttributes) bool, fail error) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if fail != nil {
			return true, nil, fail
		}
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = !deny(*r.Spec.ResourceAttributes)
		return true, r, nil
	})
	return cs
}

func TestCheckAccessNamesEveryRefusedRequest(t *testing.T) {
	t.Parallel()
	wants := []kube.Access{
		{Verb: "list", Group: "apps", Resource: "replicasets", GrantedBy: "config/rbac/role.yaml"},
		{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: "ops", Name: "another", GrantedBy: "config/rbac/leader_election_role.yaml (Role leader-election-role)"},
		{Verb: "update", Group: "chaosapps.metamagical.io", Resource: "chaospods", Subresource: "status", GrantedBy: "config/rbac/chaospod_role.yaml"},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "ops", Name: "another", GrantedBy: "config/rbac/leader_election_role.yaml (Role leader-election-role)"},
	}
	tests := []struct {
		name string
		deny func(authorizationv1.ResourceAttributes) bool
		want []string // lines of the error, none when all is allowed
	}{
		{"all allowed", func(authorizationv1.ResourceAttributes) bool { return false }, nil},
		{"the Lease by name", func(r authorizationv1.ResourceAttributes) bool { return r.Resource == "leases" && r.Name == "another" }, []string{
			`  cannot get coordination.k8s.io/leases "another" in namespace "ops": granted by config/rbac/leader_election_role.yaml (Role leader-election-role)`,
			`  cannot update coordination.k8s.io/leases "another" in namespace "ops": granted by config/rbac/leader_election_role.yaml (Role leader-election-role)`,
		}},
		{"a subresource", func(r authorizationv1.ResourceAttributes) bool { return r.Subresource == "status" }, []string{
			`  cannot update chaosapps.metamagical.io/chaospods/status: granted by config/rbac/chaospod_role.yaml`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := kube.CheckAccess(context.Background(), reviewer(tt.deny, nil), wants)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			var missing *kube.MissingAccessError
			require.ErrorAs(t, err, &missing)
			assert.Len(t, missing.Missing, len(tt.want))
			lines := strings.Split(err.Error(), "\n")
			assert.Contains(t, lines[0], "lacks")
			assert.Equal(t, tt.want, lines[1:], "one line per refused request, in the order asked")
		})
	}
}

func TestCheckAccessFailsWhenItCannotAsk(t *testing.T) {
	t.Parallel()
	err := kube.CheckAccess(context.Background(), reviewer(nil, errors.New("connection refused")),
		[]kube.Access{{Verb: "list", Resource: "pods"}})
	require.ErrorContains(t, err, "connection refused")
	var missing *kube.MissingAccessError
	assert.NotErrorAs(t, err, &missing, "not knowing is not a refusal")
	require.Error(t, kube.CheckAccess(context.Background(), nil, nil))
}
