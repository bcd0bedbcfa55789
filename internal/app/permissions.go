package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/config"
)

// Role is an RBAC role bound to the operator's ServiceAccount. Each
// [Permission] names the role that grants it: `manifests` renders the
// role into its file, and the start-up check names role and file when the
// cluster lacks it.
type Role struct {
	// Name is the kustomize base name; an overlay prefixes it.
	Name string
	// Namespace makes it a Role of that namespace; empty, a ClusterRole.
	Namespace string
	// File is where `manifests --output-dir` writes it, beside its binding.
	File string
	// Component, when set, labels the role and its binding
	// app.kubernetes.io/component, for an overlay to select them.
	Component string
	// Doc is the comment above the role in its file.
	Doc string
}

func (r Role) kind() string {
	if r.Namespace != "" {
		return "Role"
	}
	return "ClusterRole"
}

// grantedBy is what the start-up check's error says to edit.
func (r Role) grantedBy() string {
	return fmt.Sprintf("%s %s in config/%s", r.kind(), r.Name, r.File)
}

// ManagerRole is the ClusterRole of every controller's permissions, as
// kubebuilder's manager-role is: what [Controller] derives from its
// watches, writes and Events.
var ManagerRole = Role{Name: "manager-role", File: "rbac/role.yaml", Doc: "What the controllers, their caches and their Event recorders use, in every namespace: --namespace narrows the watches, not these rules."}

// ServiceAccountName is the kustomize base name of the ServiceAccount the
// roles are bound to.
const ServiceAccountName = "controller-manager"

// Permission is one rule of a [Role]: the verbs on one resource (with
// its subresource, "chaospods/status"), by name when Names are given. A
// part of the operator declares the permissions it uses where it is
// wired, in the fx group [GroupPermissions]; they are checked at start-up
// and rendered by `manifests`, so the RBAC is what the wiring runs.
type Permission struct {
	Role     Role
	Verbs    []string
	Group    string
	Resource string
	Names    []string
	// Namespace is where the requests are made, for the start-up check:
	// empty for every namespace, or for a cluster-scoped resource.
	Namespace string
	// Why says which part uses it, as the comment above the rule.
	Why string
}

// GroupPermissions is the fx value group ([]Permission, flattened) of
// the permissions the operator's parts declare. A part added from outside
// provides its own there:
//
//	fx.Provide(fx.Annotate(func(c config.Config) []app.Permission { … }, fx.ResultTags(app.GroupPermissions)))
const GroupPermissions = `group:"permissions,flatten"`

// providePermissions adds what f declares to [GroupPermissions].
func providePermissions(f func(config.Config) []Permission) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(GroupPermissions)))
}

// accesses are the requests permissions allow, each once, in a stable
// order: one per verb and name.
func accesses(permissions []Permission) []kube.Access {
	var out []kube.Access
	for _, p := range permissions {
		res, sub, _ := strings.Cut(p.Resource, "/")
		names := p.Names
		if len(names) == 0 {
			names = []string{""}
		}
		for _, v := range p.Verbs {
			for _, n := range names {
				out = append(out, kube.Access{Verb: v, Group: p.Group, Resource: res, Subresource: sub,
					Namespace: p.Namespace, Name: n, GrantedBy: p.Role.grantedBy()})
			}
		}
	}
	slices.SortFunc(out, func(a, b kube.Access) int {
		return cmp.Or(cmp.Compare(a.GrantedBy, b.GrantedBy), cmp.Compare(a.String(), b.String()))
	})
	return slices.Compact(out)
}

// The roles of the operator's parts other than its controllers.
func leaderElectionRole(cfg config.Config) Role {
	return Role{Name: "leader-election-role", Namespace: cfg.LeaderElectionNamespace, File: "rbac/leader_election_role.yaml", Doc: "Leader election (client-go's LeaseLock) in the operator's namespace. get and update are limited to the Lease of --leader-election-id (config/default copies its name here); create cannot be limited by name, as the authorizer knows no name before the object exists."}
}

func selfCertSecretRole(cfg config.Config) Role {
	return Role{Name: "selfcert-secret-role", Namespace: cfg.OperatorNamespace, File: "rbac/selfcert_role.yaml", Component: "selfcert", Doc: "--webhook-cert-mode=self: the operator keeps its CA and serving certificate in a Secret of its namespace (config/default copies its name here). config/certmanager deletes the selfcert roles: with cert-manager the operator writes no Secret, webhook configuration or CRD."}
}

func selfCertCABundleRole() Role {
	return Role{Name: "selfcert-cabundle-role", File: "rbac/selfcert_role.yaml", Component: "selfcert", Doc: "--webhook-cert-mode=self: the operator writes its CA bundle into its own webhook configurations and CRD conversion webhooks only (config/default copies their names here), and watches them by name so that a wiped bundle is restored at once."}
}

var metricsAuthRole = Role{Name: "metrics-auth-role", File: "rbac/metrics_auth_role.yaml", Doc: "--metrics-secure: a scrape's bearer token is checked with a TokenReview, its right to GET /metrics with a SubjectAccessReview."}

// leaderElectionPermissions are the elector's: get the Lease, create it
// when missing, update it to renew and to release it.
func leaderElectionPermissions(cfg config.Config) []Permission {
	if !cfg.LeaderElect {
		return nil
	}
	role := leaderElectionRole(cfg)
	ns := cfg.LeaderElectionNamespace
	return []Permission{
		{Role: role, Verbs: []string{"get", "update"}, Group: "coordination.k8s.io", Resource: "leases", Names: []string{cfg.LeaderElectionID}, Namespace: ns,
			Why: "the elector reads the Lease, renews it and releases it on stop"},
		{Role: role, Verbs: []string{"create"}, Group: "coordination.k8s.io", Resource: "leases", Namespace: ns,
			Why: "the first elector creates the Lease"},
	}
}

// selfCertPermissions are self mode's: the Secret, and the CA bundle of
// the webhook configurations ([conversionPermissions] adds each CRD's).
func selfCertPermissions(cfg config.Config) []Permission {
	if cfg.WebhookCertMode != config.CertModeSelf {
		return nil
	}
	secrets, bundles := selfCertSecretRole(cfg), selfCertCABundleRole()
	ns := cfg.OperatorNamespace
	return []Permission{
		{Role: secrets, Verbs: []string{"get", "update"}, Resource: "secrets", Names: []string{cfg.WebhookCertSecret}, Namespace: ns,
			Why: "every replica reads the certificate's Secret; the one that rotates it updates it"},
		{Role: secrets, Verbs: []string{"create"}, Resource: "secrets", Namespace: ns,
			Why: "the replica that finds the Secret missing creates it"},
		{Role: bundles, Verbs: []string{"get", "update", "watch"}, Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations",
			Names: []string{cfg.MutatingWebhookConfiguration}, Why: "the CA bundle of the mutating webhooks"},
		{Role: bundles, Verbs: []string{"get", "update", "watch"}, Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations",
			Names: []string{cfg.ValidatingWebhookConfiguration}, Why: "the CA bundle of the validating webhooks"},
	}
}

// conversionPermissions are self mode's for the conversion webhook of
// the CRD crd: its CA bundle.
func conversionPermissions(crd string) func(config.Config) []Permission {
	return func(cfg config.Config) []Permission {
		if cfg.WebhookCertMode != config.CertModeSelf {
			return nil
		}
		return []Permission{{Role: selfCertCABundleRole(), Verbs: []string{"get", "update", "watch"}, Group: "apiextensions.k8s.io",
			Resource: "customresourcedefinitions", Names: []string{crd}, Why: "the CA bundle of the CRD's conversion webhook"}}
	}
}

// metricsAuthPermissions are the secure metrics server's.
func metricsAuthPermissions(cfg config.Config) []Permission {
	if !cfg.MetricsSecure || cfg.MetricsBindAddress == "0" {
		return nil
	}
	return []Permission{
		{Role: metricsAuthRole, Verbs: []string{"create"}, Group: "authentication.k8s.io", Resource: "tokenreviews", Why: "who is scraping"},
		{Role: metricsAuthRole, Verbs: []string{"create"}, Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Why: "whether they may read /metrics"},
	}
}

type permissionParams struct {
	fx.In
	Client      kubernetes.Interface
	Logger      *zap.Logger
	Permissions []Permission `group:"permissions"`
}

// permissionCheck fails start-up, one line per missing permission, before
// any informer or elector starts: without it a replica with too narrow a
// Role turns Ready and then retries a forbidden request forever.
func permissionCheck(lc fx.Lifecycle, p permissionParams) {
	lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
		defer cancel()
		wants := accesses(p.Permissions)
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
