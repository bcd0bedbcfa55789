package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/config"
)

// Where config/rbac grants each permission (base names: config/default
// prefixes them), for the start-up error to say what to edit.
const (
	grantManager    = "ClusterRole manager-role in config/rbac/role.yaml"
	grantChaosPod   = "ClusterRole chaospod-role in config/rbac/chaospod_role.yaml"
	grantLeader     = "Role leader-election-role in config/rbac/leader_election_role.yaml"
	grantSelfSecret = "Role selfcert-secret-role in config/rbac/selfcert_role.yaml"
	grantCABundle   = "ClusterRole selfcert-cabundle-role in config/rbac/selfcert_role.yaml"
	grantMetrics    = "ClusterRole metrics-auth-role in config/rbac/metrics_auth_role.yaml"
)

// RequiredAccess lists every request the parts cfg enables will make, each
// with the manifest that grants it: the check at start-up asks the API
// server about each, and a test holds config/rbac to the list.
func RequiredAccess(cfg config.Config) []kube.Access {
	var out []kube.Access
	add := func(grant, group, resource, namespace, name string, verbs ...string) {
		res, sub, _ := strings.Cut(resource, "/")
		for _, v := range verbs {
			out = append(out, kube.Access{Verb: v, Group: group, Resource: res, Subresource: sub, Namespace: namespace, Name: name, GrantedBy: grant})
		}
	}
	ns := cfg.Namespace // "" watches every namespace
	replicaSets, chaosPods := cfg.Runs(config.ControllerReplicaSet), cfg.Runs(config.ControllerChaosPod)
	if replicaSets || chaosPods {
		// Both controllers map Pods to their owners and record Events.
		add(grantManager, "", "pods", ns, "", "list", "watch")
		add(grantManager, "events.k8s.io", "events", ns, "", "create", "patch")
	}
	if replicaSets {
		add(grantManager, "apps", "replicasets", ns, "", "list", "watch", "patch")
	}
	if chaosPods {
		add(grantChaosPod, "", "pods", ns, "", "create", "delete")
		add(grantChaosPod, chaosv1.GroupName, "chaospods", ns, "", "list", "watch", "update")
		// The operator's Pod validator reads the ChaosPod a Pod names
		// from the API server, never from the cache.
		add(grantChaosPod, chaosv1.GroupName, "chaospods", ns, "", "get")
		add(grantChaosPod, chaosv1.GroupName, "chaospods/status", ns, "", "update")
		// The Pods' controller reference blocks the owner's deletion, which
		// clusters with OwnerReferencesPermissionEnforcement allow only to
		// whoever may update the owner's finalizers.
		add(grantChaosPod, chaosv1.GroupName, "chaospods/finalizers", ns, "", "update")
	}
	if cfg.LeaderElect {
		add(grantLeader, "coordination.k8s.io", "leases", cfg.LeaderElectionNamespace, cfg.LeaderElectionID, "get", "update")
		add(grantLeader, "coordination.k8s.io", "leases", cfg.LeaderElectionNamespace, "", "create")
	}
	if cfg.WebhookCertMode == config.CertModeSelf {
		add(grantSelfSecret, "", "secrets", cfg.OperatorNamespace, cfg.WebhookCertSecret, "get", "update")
		add(grantSelfSecret, "", "secrets", cfg.OperatorNamespace, "", "create")
		add(grantCABundle, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", cfg.MutatingWebhookConfiguration, "get", "update", "watch")
		add(grantCABundle, "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", cfg.ValidatingWebhookConfiguration, "get", "update", "watch")
		add(grantCABundle, "apiextensions.k8s.io", "customresourcedefinitions", "", ChaosPodCRDName, "get", "update", "watch")
	}
	if cfg.MetricsSecure && cfg.MetricsBindAddress != "0" {
		add(grantMetrics, "authentication.k8s.io", "tokenreviews", "", "", "create")
		add(grantMetrics, "authorization.k8s.io", "subjectaccessreviews", "", "", "create")
	}
	return out
}

// groupAccess is the fx value group ([]kube.Access, flattened) of the
// requests that parts added from outside make: [Controller] adds its For
// kind's, so that its RBAC is checked at start-up like the operator's own.
const groupAccess = `group:"required-access,flatten"`

type permissionParams struct {
	fx.In
	Config config.Config
	Client kubernetes.Interface
	Logger *zap.Logger
	Extra  []kube.Access `group:"required-access"`
}

// permissionCheck fails start-up, one line per missing permission, before
// any informer or elector starts: without it a replica with too narrow a
// Role turns Ready and then retries a forbidden request forever.
func permissionCheck(lc fx.Lifecycle, p permissionParams) {
	lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		defer cancel()
		wants := append(RequiredAccess(p.Config), p.Extra...)
		start := time.Now()
		for {
			err := kube.CheckAccess(ctx, p.Client, wants)
			var missing *kube.MissingAccessError
			switch {
			case err == nil:
				p.Logger.Info("permissions checked", zap.Int("requests", len(wants)), zap.Duration("took", time.Since(start)))
				return nil
			case errors.As(err, &missing):
				return err
			}
			// The server answered /version a moment ago: a review that
			// fails is a passing hiccup (a restart, a 429) until the
			// preflight deadline says otherwise.
			select {
			case <-ctx.Done():
				return err
			case <-time.After(500 * time.Millisecond):
			}
		}
	}})
}
