package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// commandTimeout bounds every kubectl or make the deploy tests run.
const commandTimeout = 3 * time.Minute

// command runs name in the repository root against cp's cluster (as
// KUBECONFIG) and returns its combined output, failing the test when it
// fails. Settings of an enclosing make are dropped so that a nested make
// starts afresh.
func command(t *testing.T, cp *controlplane.ControlPlane, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoPath(t)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, k := range []string{"KUBECONFIG=", "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL="} {
			if strings.HasPrefix(kv, k) {
				return true
			}
		}
		return false
	}), "KUBECONFIG="+cp.KubeconfigPath)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	t.Logf("%s %s (%s):\n%s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	return string(out)
}

func kubectl(t *testing.T, cp *controlplane.ControlPlane, args ...string) string {
	t.Helper()
	bin, err := controlplane.Binary("kubectl")
	require.NoError(t, err)
	return command(t, cp, bin, args...)
}

// makeTarget runs `make target` with kubectl from bin/.
func makeTarget(t *testing.T, cp *controlplane.ControlPlane, target string, vars ...string) string {
	t.Helper()
	bin, err := controlplane.Binary("kubectl")
	require.NoError(t, err)
	return command(t, cp, "make", append([]string{"--no-print-directory", target, "KUBECTL=" + bin}, vars...)...)
}

// objectState sorts objs into those the cluster has and those it has not.
func objectState(t *testing.T, cp *controlplane.ControlPlane, objs []*unstructured.Unstructured) (present, absent []*unstructured.Unstructured) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	require.NoError(t, err)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			absent = append(absent, o) // its CRD is gone
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(o.GetNamespace())
		}
		_, err = ri.Get(context.Background(), o.GetName(), metav1.GetOptions{})
		switch {
		case err == nil:
			present = append(present, o)
		case apierrors.IsNotFound(err):
			absent = append(absent, o)
		default:
			require.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
		}
	}
	return present, absent
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetName())
	}
	return out
}

// requireAllPresent fails unless the cluster has every object of objs.
func requireAllPresent(t *testing.T, cp *controlplane.ControlPlane, objs []*unstructured.Unstructured) {
	t.Helper()
	_, absent := objectState(t, cp, objs)
	require.Empty(t, names(absent), "objects of config/default missing")
}

// requireNothingLeft fails when an object of objs, or any cluster-scoped
// object labeled as the operator's, is still there.
func requireNothingLeft(t *testing.T, cp *controlplane.ControlPlane, objs []*unstructured.Unstructured) {
	t.Helper()
	present, _ := objectState(t, cp, objs)
	require.Empty(t, names(present), "objects left behind")
	ctx := context.Background()
	admin := cp.Clientset()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=hexagonal-operator"}
	roles, err := admin.RbacV1().ClusterRoles().List(ctx, sel)
	require.NoError(t, err)
	assert.Empty(t, roles.Items)
	bindings, err := admin.RbacV1().ClusterRoleBindings().List(ctx, sel)
	require.NoError(t, err)
	assert.Empty(t, bindings.Items)
	mutating, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, mutating.Items)
	validating, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, validating.Items)
}

func deploymentImage(t *testing.T, cp *controlplane.ControlPlane) string {
	t.Helper()
	dep, err := cp.Clientset().AppsV1().Deployments(operatorNamespace).Get(context.Background(), operatorServiceAccount, metav1.GetOptions{})
	require.NoError(t, err)
	return dep.Spec.Template.Spec.Containers[0].Image
}

// The deploy of the README and docs/deploying.md, typed as users type it:
// client-side `kubectl apply -k config/default` creates everything (the
// CRD included, whose last-applied annotation must fit), applying again server-side works, and
// `make undeploy` leaves nothing; then kubebuilder's targets: `make install`
// and `uninstall`, `make build-installer` applied with `kubectl apply -f`,
// `make deploy IMG=...` over it, and `make undeploy` again.
func TestDeployAsTheREADMESays(t *testing.T) {
	t.Parallel()
	// The namespace controller finishes the namespace's deletion.
	cp := controlplane.StartT(t, controlplane.Options{ControllerManager: true})
	objs := render(t, "config", "default")

	kubectl(t, cp, "apply", "-k", "config/default")
	requireAllPresent(t, cp, objs)
	assert.Equal(t, "hexagonal-operator:latest", deploymentImage(t, cp))
	crd, err := dynamicCRD(t, cp)
	require.NoError(t, err)
	last := crd.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	assert.NotEmpty(t, last, "applied client-side")
	t.Logf("figure: CRD last-applied annotation %d bytes of the API server's 262144", len(last))

	kubectl(t, cp, "apply", "--server-side", "-k", "config/default")
	kubectl(t, cp, "apply", "-k", "config/default") // and back, as users re-run it
	makeTarget(t, cp, "undeploy")
	requireNothingLeft(t, cp, objs)

	// The CRD alone, as config/default renders it.
	makeTarget(t, cp, "install")
	crd, err = dynamicCRD(t, cp)
	require.NoError(t, err)
	svc, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service", "name")
	assert.Equal(t, "hexagonal-operator-webhook-service", svc)
	present, _ := objectState(t, cp, objs)
	assert.Equal(t, []string{"CustomResourceDefinition chaospods.chaosapps.metamagical.io"}, names(present), "make install installs the CRD only")
	makeTarget(t, cp, "uninstall")
	_, err = dynamicCRD(t, cp)
	require.True(t, apierrors.IsNotFound(err), "make uninstall removes the CRD: %v", err)

	dist := t.TempDir()
	makeTarget(t, cp, "build-installer", "DIST="+dist, "IMG=registry.example:5000/team/operator:v2")
	installer, err := controlplane.Manifests(dist)
	require.NoError(t, err)
	assert.ElementsMatch(t, names(objs), names(installer), "install.yaml holds what config/default deploys")
	kubectl(t, cp, "apply", "-f", filepath.Join(dist, "install.yaml"))
	requireAllPresent(t, cp, objs)
	assert.Equal(t, "registry.example:5000/team/operator:v2", deploymentImage(t, cp))
	makeTarget(t, cp, "deploy", "IMG=registry.example:5000/team/operator:v3")
	assert.Equal(t, "registry.example:5000/team/operator:v3", deploymentImage(t, cp))
	makeTarget(t, cp, "undeploy")
	requireNothingLeft(t, cp, objs)
}

func dynamicCRD(t *testing.T, cp *controlplane.ControlPlane) (*unstructured.Unstructured, error) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	return dyn.Resource(crdResource).Get(context.Background(), "chaospods."+chaosv1.GroupName, metav1.GetOptions{})
}

// copyConfigElsewhere copies config/ into a temporary folder with
// config/default's namespace and name prefix changed, as a user would, and
// returns the copy's config folder.
func copyConfigElsewhere(t *testing.T, namespace, prefix string) string {
	t.Helper()
	return copyConfig(t, map[string]string{
		"namespace: hexagonal-operator-system": "namespace: " + namespace,
		"namePrefix: hexagonal-operator-":      "namePrefix: " + prefix,
	})
}

// config/default with another namespace and name prefix: everything follows
// (the Pod webhooks skip the new namespace, RBAC names the renamed objects,
// the Deployment tells the operator their names), and the operator, run as
// the rendered ServiceAccount with the rendered Deployment's environment,
// passes its permission check and does its documented work in both
// certificate modes.
func TestDeployElsewhere(t *testing.T) {
	t.Parallel()
	const ns, prefix = "acme-ops", "acme-"
	config := copyConfigElsewhere(t, ns, prefix)
	objs, err := controlplane.Manifests(filepath.Join(config, "default"))
	require.NoError(t, err)
	for _, o := range objs {
		assert.NotContains(t, o.GetName(), "hexagonal-operator-", "%s %s keeps the old prefix", o.GetKind(), o.GetName())
		if o.GetNamespace() != "" {
			assert.Equal(t, ns, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		}
	}
	dep := convert[appsv1.Deployment](t, find(t, objs, "Deployment", prefix+"controller-manager"))
	env := []string{"POD_NAMESPACE=" + ns}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	assert.Contains(t, env, "OPERATOR_WEBHOOK_SERVICE_NAME="+prefix+"webhook-service")
	assert.Contains(t, env, "OPERATOR_MUTATING_WEBHOOK_CONFIGURATION_NAME="+prefix+"mutating-webhook-configuration")
	// The Lease follows the prefix, and RBAC allows that one.
	assert.Contains(t, env, "OPERATOR_LEADER_ELECTION_ID="+prefix+"leader")
	leaseRole := convert[rbacv1.Role](t, find(t, objs, "Role", prefix+"leader-election-role"))
	assert.Equal(t, []string{prefix + "leader"}, leaseRole.Rules[0].ResourceNames)
	assert.Equal(t, prefix+"webhook-critical", dep.Spec.Template.Spec.PriorityClassName)

	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	var rbac []*unstructured.Unstructured
	for _, o := range objs {
		if slices.Contains(identityKinds, o.GetKind()) {
			rbac = append(rbac, o)
		}
	}
	require.NoError(t, cp.Apply(ctx, rbac...))
	saCfg, err := cp.ServiceAccountConfig(ctx, ns, prefix+"controller-manager")
	require.NoError(t, err)
	kubeconfig := writeKubeconfig(t, saCfg)

	ports := operatorproc.FreePorts(t, 3)
	certDir := t.TempDir()
	_, err = cp.IssueServingCert(certDir)
	require.NoError(t, err)
	server := controlplane.WebhookServer{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(ctx, filepath.Join(config, "default"), &server)
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, filepath.Join(config, "default"), server)
	require.NoError(t, err)
	p := startDeployedLike(t, env, kubeconfig, ports, "--leader-election-namespace="+ns,
		"--webhook-cert-mode=external", "--webhook-cert-path="+certDir)
	assert.Contains(t, p.Output(), `"msg":"permissions checked"`)
	require.Eventually(t, func() bool {
		lease, err := admin.CoordinationV1().Leases(ns).Get(ctx, prefix+"leader", metav1.GetOptions{})
		return err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != ""
	}, 30*time.Second, 100*time.Millisecond, "the operator holds the Lease %s", prefix+"leader")

	const user = "acme-apps"
	require.NoError(t, cp.EnsureNamespace(ctx, user))
	_, err = admin.AppsV1().ReplicaSets(user).Create(ctx, replicaSet(user, "web"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := admin.AppsV1().ReplicaSets(user).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Labels["hello"] == "world"
	}, 30*time.Second, 100*time.Millisecond, "ReplicaSet labeled")
	pod := func(namespace string) *corev1.Pod {
		// Restricted, as the operator's namespace enforces.
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "probe"},
			Spec: corev1.PodSpec{
				SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				}}},
			},
		}
	}
	var admitted *corev1.Pod
	require.Eventually(t, func() bool { // the API server's webhook clients start cold
		admitted, err = admin.CoreV1().Pods(user).Create(ctx, pod(user), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "Pod admitted: %v", err)
	assert.Equal(t, "foo", admitted.Annotations["example-mutating-admission-webhook"], "a user namespace's Pod goes through the webhooks")
	own, err := admin.CoreV1().Pods(ns).Create(ctx, pod(ns), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.NotContains(t, own.Annotations, "example-mutating-admission-webhook", "the operator's own namespace skips the Pod webhooks")

	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	chaos, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(user).Create(ctx, chaosPodV1("chaos"), metav1.CreateOptions{})
	require.NoError(t, err)
	// The template policy refuses the operator's Pods until the API server
	// has resolved its param kind (the fail-closed window after install,
	// docs/reliability.md); the reconciler retries with back-off, so the
	// Pod comes at most about one window after the window closes.
	require.Eventually(t, func() bool {
		got, err := admin.CoreV1().Pods(user).Get(ctx, "chaos", metav1.GetOptions{})
		return err == nil && metav1.IsControlledBy(got, chaos)
	}, 90*time.Second, 200*time.Millisecond, "the ChaosPod's Pod is created")
	require.NoError(t, p.Signal(os.Interrupt))
	require.Equal(t, 0, p.Wait(t, 20*time.Second))

	// Self mode writes the CA bundle into the renamed configurations, which
	// the rendered RBAC allows by their new names.
	p = startDeployedLike(t, env, kubeconfig, operatorproc.FreePorts(t, 3), "--leader-election-namespace="+ns,
		"--webhook-cert-mode=self", "--webhook-cert-dir="+t.TempDir())
	require.Eventually(t, func() bool {
		m, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, prefix+"mutating-webhook-configuration", metav1.GetOptions{})
		if err != nil || string(m.Webhooks[0].ClientConfig.CABundle) == string(cp.CACert()) {
			return false
		}
		v, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, prefix+"validating-webhook-configuration", metav1.GetOptions{})
		return err == nil && string(v.Webhooks[0].ClientConfig.CABundle) != string(cp.CACert())
	}, 30*time.Second, 200*time.Millisecond, "self mode wrote the CA bundles of the renamed configurations")
	secret, err := admin.CoreV1().Secrets(ns).Get(ctx, "hexagonal-operator-webhook-cert", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, string(secret.Data["tls.crt"]), "BEGIN CERTIFICATE")
	assert.NotContains(t, p.Output(), "forbidden")
	require.NoError(t, p.Signal(os.Interrupt))
	require.Equal(t, 0, p.Wait(t, 20*time.Second))
}

// A replica whose Role lacks something its enabled parts use exits 1 at
// start, naming each missing permission and the manifest that grants it,
// instead of turning Ready and retrying a forbidden request forever.
func TestStartupNamesMissingPermissions(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	rbac := rbacOf(t)
	require.NoError(t, cp.Apply(ctx, rbac...))
	_, err := cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), nil)
	require.NoError(t, err)
	// Self mode keeps their CA bundles; nothing here calls them.
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), controlplane.WebhookServer{Host: "127.0.0.1:1", CABundle: cp.CACert()})
	require.NoError(t, err)
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	kubeconfig := writeKubeconfig(t, saCfg)
	asOperator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	run := func(extra ...string) *operatorproc.Process {
		ports := operatorproc.FreePorts(t, 3)
		return operatorproc.Start(t, operatorBin, []string{"POD_NAMESPACE=" + operatorNamespace}, append([]string{
			"--kubeconfig=" + kubeconfig,
			"--leader-elect",
			"--webhook-port=" + strconv.Itoa(ports[0]),
			"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
			"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
			"--webhook-cert-mode=self",
			"--webhook-cert-dir=" + t.TempDir(),
		}, extra...)...)
	}
	// without drops verbs from a rule of the named ClusterRole for the
	// length of a test case.
	without := func(t *testing.T, role, resource string, verbs ...string) {
		name := "hexagonal-operator-" + role
		orig, err := admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		cut := orig.DeepCopy()
		for i, r := range cut.Rules {
			if slices.Contains(r.Resources, resource) {
				cut.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return slices.Contains(verbs, v) })
			}
		}
		cut.Rules = slices.DeleteFunc(cut.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Verbs) == 0 })
		_, err = admin.RbacV1().ClusterRoles().Update(ctx, cut, metav1.UpdateOptions{})
		require.NoError(t, err)
		res, sub, _ := strings.Cut(resource, "/")
		rule := orig.Rules[slices.IndexFunc(orig.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, resource) })]
		group, object := rule.APIGroups[0], ""
		if len(rule.ResourceNames) > 0 {
			object = rule.ResourceNames[0]
		}
		allowed := func() bool { // as the operator, once the authorizer's cache has the change
			r, err := asOperator.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: verbs[0], Group: group, Resource: res, Subresource: sub, Name: object,
				}},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			return r.Status.Allowed
		}
		require.Eventually(t, func() bool { return !allowed() }, 10*time.Second, 20*time.Millisecond, "%s no longer allowed", verbs[0])
		t.Cleanup(func() {
			cur, err := admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			cur.Rules = orig.Rules
			_, err = admin.RbacV1().ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{})
			require.NoError(t, err)
			require.Eventually(t, allowed, 10*time.Second, 20*time.Millisecond, "%s allowed again", verbs[0])
		})
	}

	// The whole check, when nothing is missing, and what it costs.
	p := run()
	checked := regexp.MustCompile(`"msg":"permissions checked","requests":(\d+),"took":([0-9.e-]+)`)
	require.Eventually(t, func() bool { return checked.MatchString(p.Output()) }, 20*time.Second, 50*time.Millisecond, "the check passes")
	require.Eventually(t, func() bool { return strings.Contains(p.Output(), `"msg":"crd installed"`) }, 20*time.Second, 50*time.Millisecond, "and start-up goes on")
	took := checked.FindStringSubmatch(p.Output())
	require.Len(t, took, 3, "the check logs what it asked and how long it took")
	seconds, err := strconv.ParseFloat(took[2], 64)
	require.NoError(t, err)
	t.Logf("figure: permission check at start-up: %s requests in %.1f ms", took[1], seconds*1000)
	require.NoError(t, p.Kill()) // still starting: its CRD's conversion webhook points nowhere here
	p.Wait(t, 20*time.Second)

	tests := []struct {
		name  string
		cut   func(t *testing.T)
		extra []string
		want  []string // each on one line of the output
	}{
		{
			name:  "a Lease the Role does not name",
			extra: []string{"--leader-election-id=another"},
			want: []string{
				`cannot get coordination.k8s.io/leases "another" in namespace "hexagonal-operator-system": granted by Role leader-election-role in config/rbac/leader_election_role.yaml`,
				`cannot update coordination.k8s.io/leases "another" in namespace "hexagonal-operator-system": granted by Role leader-election-role in config/rbac/leader_election_role.yaml`,
			},
		},
		{
			name:  "the replicaset controller's patch",
			cut:   func(t *testing.T) { without(t, "manager-role", "replicasets", "patch") },
			extra: []string{"--controllers=replicaset"},
			want:  []string{`cannot patch apps/replicasets: granted by ClusterRole manager-role in config/rbac/role.yaml`},
		},
		{
			name:  "the chaospod controller's status",
			cut:   func(t *testing.T) { without(t, "manager-role", "chaospods/status", "update") },
			extra: []string{"--controllers=chaospod"},
			want:  []string{`cannot update chaosapps.metamagical.io/chaospods/status: granted by ClusterRole manager-role in config/rbac/role.yaml`},
		},
		{
			name:  "the chaospod controller's finalizers",
			cut:   func(t *testing.T) { without(t, "manager-role", "chaospods/finalizers", "update") },
			extra: []string{"--controllers=chaospod"},
			want:  []string{`cannot update chaosapps.metamagical.io/chaospods/finalizers: granted by ClusterRole manager-role in config/rbac/role.yaml`},
		},
		{
			name: "self mode's webhook configurations",
			cut:  func(t *testing.T) { without(t, "selfcert-cabundle-role", "validatingwebhookconfigurations", "update") },
			want: []string{`cannot update admissionregistration.k8s.io/validatingwebhookconfigurations "hexagonal-operator-validating-webhook-configuration": granted by ClusterRole selfcert-cabundle-role in config/rbac/selfcert_role.yaml`},
		},
		{
			name: "secure metrics' token reviews",
			cut:  func(t *testing.T) { without(t, "metrics-auth-role", "tokenreviews", "create") },
			want: []string{`cannot create authentication.k8s.io/tokenreviews: granted by ClusterRole metrics-auth-role in config/rbac/metrics_auth_role.yaml`},
		},
	}
	for _, tt := range tests { // one after the other: they share the roles
		t.Run(tt.name, func(t *testing.T) {
			if tt.cut != nil {
				tt.cut(t)
			}
			start := time.Now()
			p := run(tt.extra...)
			require.Equal(t, 1, p.Wait(t, 10*time.Second), "exits 1 within 10 s")
			t.Logf("figure: %s: exit 1 after %s", tt.name, time.Since(start).Round(time.Millisecond))
			out := p.Output()
			lines := strings.Split(out, "\n")
			t.Logf("the error:\n%s", strings.Join(slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.HasPrefix(l, "{") }), "\n"))
			for _, want := range tt.want {
				assert.True(t, slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == want }), "a line %q in:\n%s", want, out)
			}
			assert.Equal(t, len(tt.want), strings.Count(out, "\n  cannot "), "only what is missing is named:\n%s", out)
			assert.NotContains(t, out, "panic")
		})
	}
}
