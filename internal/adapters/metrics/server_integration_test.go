package metrics_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/adapters/metrics"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// TestSecureServerOnRealAPIServer checks the secure endpoint against real
// TokenReview and SubjectAccessReview answers, with ServiceAccount tokens
// minted by the TokenRequest API and RBAC deciding.
func TestSecureServerOnRealAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := cp.Clientset()
	const ns = "monitoring"

	// "scraper" may get /metrics through a ClusterRole; "nobody" exists
	// but has no such grant.
	_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	scraper, err := cp.ServiceAccountConfig(ctx, ns, "scraper")
	require.NoError(t, err)
	nobody, err := cp.ServiceAccountConfig(ctx, ns, "nobody")
	require.NoError(t, err)

	reg := registryWithCounter(t)
	restMetrics, err := metrics.NewRESTClientMetrics(reg)
	require.NoError(t, err)
	require.NoError(t, restMetrics.Start(ctx))
	t.Cleanup(func() { _ = restMetrics.Stop(context.Background()) })
	s, err := metrics.New(metrics.Options{BindAddress: "127.0.0.1:0", Secure: true}, &certs.SelfSigned{}, reg, admin, zaptest.NewLogger(t))
	require.NoError(t, err)
	endpoint := "https://" + startServer(t, s) + "/metrics"
	client := tlsClient(false)

	tests := []struct {
		name, token string
		wantCode    int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"invalid token", "not-a-token", http.StatusUnauthorized},
		{"serviceaccount without a grant", nobody.BearerToken, http.StatusForbidden},
		{"serviceaccount with the ClusterRole", scraper.BearerToken, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := get(t, client, endpoint, tt.token)
			assert.Equal(t, tt.wantCode, code, body)
		})
	}

	// The reviews themselves went through client-go, so they are counted.
	apiHost, err := url.Parse(cp.Config.Host)
	require.NoError(t, err)
	code, body, _ := get(t, client, endpoint, scraper.BearerToken)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `rest_client_requests_total{code="201",host="`+apiHost.Host+`",method="POST"}`)
}
