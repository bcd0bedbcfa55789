package operatortest

import (
	"context"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// rbacSettleTimeout bounds the wait for the API server's authorizer to
// see the roles just applied: its cache follows them a moment later.
const rbacSettleTimeout = 10 * time.Second

// Deployment is an application [Deploy] runs as its generated config
// deploys it.
type Deployment struct {
	*Operator
	// Config is the configuration it runs with.
	Config config.Config
	// User is the ServiceAccount it authenticates as, as the API server
	// and its audit log name it.
	User string
	// Webhooks are the webhook configurations of the config's webhook
	// folder, as applied: each clientConfig pointed at the application.
	Webhooks []*unstructured.Unstructured

	cp *controlplane.ControlPlane
}

// Deploy runs the application built with opts the way a user deploying
// dir would: dir is the config folder `manifests` generated for it with
// args (and [ManifestsEnv], kustomize's base names). Deploy creates the
// ServiceAccount the roles are bound to, in their namespace, applies
// every object of dir/rbac unchanged, starts the application with args as
// that ServiceAccount, and applies dir/webhook with each
// clientConfig.service replaced by the URL of the application's webhook
// server, so that the API server calls it with exactly the generated
// rules, names, selectors and failure policies. Install the CRDs first:
// the caches need them.
//
// The application's start-up check asks the API server, as the
// ServiceAccount, for every permission its wiring uses, and fails the
// test naming each one missing: a Deployment that starts proves the
// generated RBAC suffices. The application runs with [Config]'s test
// settings, but with the metrics server secure, as `manifests` renders
// its RBAC for (--metrics-secure defaults to true; args may say
// otherwise), and stops when the test ends. Deploy one application per
// control plane: its roles and webhook configurations are cluster-wide.
func Deploy(t testing.TB, cp *controlplane.ControlPlane, dir string, opts fx.Option, args ...string) *Deployment {
	t.Helper()
	// Long enough for the wait for the authorizer and for Start.
	ctx, cancel := context.WithTimeout(context.Background(), rbacSettleTimeout+2*StartTimeout)
	defer cancel()
	namespace := ManifestsEnv["POD_NAMESPACE"]
	saConfig, err := cp.ServiceAccountConfig(ctx, namespace, app.ServiceAccountName)
	require.NoError(t, err)
	rbac, err := controlplane.Manifests(filepath.Join(dir, "rbac"))
	require.NoError(t, err)
	require.NotEmpty(t, rbac, "%s/rbac holds the roles", dir)
	require.NoError(t, cp.Apply(ctx, rbac...))

	cfg := Config(t, cp, append(manifestsArgs(), append([]string{"--metrics-secure=true"}, args...)...)...)
	cfg.OperatorNamespace = namespace // POD_NAMESPACE, which is no flag
	wants, err := app.RequiredAccess(cfg, opts)
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(saConfig)
	require.NoError(t, err)
	awaitAccess(ctx, client, wants)

	// The ServiceAccount's client configuration is the only one the
	// application gets: the graph reads the kubeconfig nowhere else.
	op := Start(t, cfg, opts, fx.Replace(saConfig))
	server := controlplane.WebhookServer{Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.WebhookPort)), CABundle: cp.CACert()}
	webhooks, err := cp.InstallWebhooks(ctx, filepath.Join(dir, "webhook"), server)
	require.NoError(t, err)
	return &Deployment{
		Operator: op,
		Config:   cfg,
		User:     "system:serviceaccount:" + namespace + ":" + app.ServiceAccountName,
		Webhooks: webhooks,
		cp:       cp,
	}
}

// manifestsArgs are the flags that say what [ManifestsEnv] says. Of
// POD_NAMESPACE they say only the leader-election namespace it defaults:
// the operator's namespace has no flag, and Deploy sets it.
func manifestsArgs() []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(ManifestsEnv)) {
		v := ManifestsEnv[k]
		switch {
		case k == "POD_NAMESPACE":
			args = append(args, "--leader-election-namespace="+v)
		case strings.HasPrefix(k, "OPERATOR_"):
			args = append(args, "--"+strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "OPERATOR_"), "_", "-"))+"="+v)
		}
	}
	return args
}

// awaitAccess returns once client may make every request of wants, or
// when ctx or [rbacSettleTimeout] runs out: the start-up check that
// follows then names what is missing, as a deployment's would.
func awaitAccess(ctx context.Context, client kubernetes.Interface, wants []kube.Access) {
	ctx, cancel := context.WithTimeout(ctx, rbacSettleTimeout)
	defer cancel()
	for kube.CheckAccess(ctx, client, wants) != nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Requests are the requests the application's ServiceAccount has made so
// far, as the audit log records them when they complete, and watches also
// when they start (a watch completes only when it ends, and an informer's
// list is a watch where the API server streams lists). The control plane
// must write the log (controlplane.Options.AuditPolicy), which it does
// asynchronously: wait for a request you expect before judging the
// others.
func (d *Deployment) Requests() ([]controlplane.AuditEvent, error) {
	events, err := d.cp.AuditEvents()
	if err != nil {
		return nil, err
	}
	var out []controlplane.AuditEvent
	for _, e := range events {
		if e.User.Username == d.User && (e.Stage == "ResponseComplete" || (e.Stage == "ResponseStarted" && e.Verb == "watch")) {
			out = append(out, e)
		}
	}
	return out, nil
}
