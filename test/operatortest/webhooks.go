package operatortest

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// InstallWebhooks registers hooks with the control plane: it renders them
// into a MutatingWebhookConfiguration and a ValidatingWebhookConfiguration
// called name (as config/webhook is rendered, with
// webhook.MutatingWebhookConfiguration and ValidatingWebhookConfiguration)
// and points each webhook at https://127.0.0.1:<cfg's webhook port><path>,
// trusting the control plane's CA, which signed the serving certificate of
// [Config]. A configuration without hooks is not created.
//
// The API server learns about new configurations a moment later: wait for
// a hook's effect (a dry-run create, say) before relying on it.
func InstallWebhooks(t testing.TB, cp *controlplane.ControlPlane, cfg config.Config, name string, hooks []webhook.Hook) {
	t.Helper()
	ctx := context.Background()
	api := cp.Clientset().AdmissionregistrationV1()
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.WebhookPort))
	// The service is a placeholder: each client config is replaced by a URL.
	svc := webhook.ServiceRef{Namespace: "unused", Name: "unused"}

	mutating := webhook.MutatingWebhookConfiguration(name, svc, hooks)
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig = clientConfig(host, mutating.Webhooks[i].ClientConfig, cp.CACert())
	}
	if len(mutating.Webhooks) > 0 {
		_, err := api.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	validating := webhook.ValidatingWebhookConfiguration(name, svc, hooks)
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig = clientConfig(host, validating.Webhooks[i].ClientConfig, cp.CACert())
	}
	if len(validating.Webhooks) > 0 {
		_, err := api.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// clientConfig turns a service reference into a URL on host, keeping the
// path, as controlplane.InstallWebhooks does for config/webhook.
func clientConfig(host string, cc admissionregistrationv1.WebhookClientConfig, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	path := "/"
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	url := "https://" + host + path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
}
