package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// operatorNamespace and operatorServiceAccount are where config/default
// deploys the operator and as whom it runs.
const (
	operatorNamespace      = "hexagonal-operator-system"
	operatorServiceAccount = "hexagonal-operator-controller-manager"
)

func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(append([]string{root}, elem...)...)
}

func render(t *testing.T, elem ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controlplane.Manifests(repoPath(t, elem...))
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	require.Failf(t, "object not rendered", "%s %s", kind, name)
	return nil
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out))
	return out
}

// Every object of config/default passes the real API server's validation
// and admission (server-side dry run), and the overlay that swaps self mode
// for cert-manager does too, apart from cert-manager's own kinds.
func TestManifestsAreAcceptedByTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	// Dry run keeps nothing, so the namespace the objects go to must exist.
	require.NoError(t, cp.EnsureNamespace(ctx, operatorNamespace))

	def := render(t, "config", "default")
	require.NoError(t, cp.DryRunApply(ctx, def...))
	for _, o := range def {
		if o.GetKind() != "Namespace" && o.GetKind() != "CustomResourceDefinition" && !slices.Contains(clusterScoped, o.GetKind()) {
			assert.Equal(t, operatorNamespace, o.GetNamespace(), "%s %s", o.GetKind(), o.GetName())
		}
	}

	var overlay []*unstructured.Unstructured
	var certManager []string
	for _, o := range render(t, "config", "certmanager") {
		if o.GroupVersionKind().Group == "cert-manager.io" {
			certManager = append(certManager, o.GetKind())
			continue // no cert-manager CRDs here: checked by TestCertManagerOverlay
		}
		overlay = append(overlay, o)
	}
	assert.ElementsMatch(t, []string{"Issuer", "Certificate", "Certificate"}, certManager)
	require.NoError(t, cp.DryRunApply(ctx, overlay...))
}

var clusterScoped = []string{"PriorityClass", "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// The Deployment is what docs/deploying.md promises, and its labels
// reach the Services that select it. Its two replicas go to two nodes where
// there are two (a topology spread that still lets a one-node cluster run
// both, and a surge Pod join a node during a rollout), ahead of ordinary
// Pods (a PriorityClass of its own, below the cluster's own classes).
func TestDeploymentIsHardenedAndSelected(t *testing.T) {
	t.Parallel()
	objs := render(t, "config", "default")
	dep := convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorServiceAccount))
	require.EqualValues(t, 2, *dep.Spec.Replicas)
	pod := dep.Spec.Template.Spec
	assert.Equal(t, operatorServiceAccount, pod.ServiceAccountName)
	require.NotNil(t, pod.SecurityContext)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Subset(t, c.Args, []string{"--leader-elect", "--webhook-cert-mode=self", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443"})
	assert.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	assert.Equal(t, []corev1.Capability{"ALL"}, c.SecurityContext.Capabilities.Drop)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.False(t, c.Resources.Requests.Cpu().IsZero())
	assert.False(t, c.Resources.Limits.Memory().IsZero())
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}})
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}, "the certificate folder is writable")
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "OPERATOR_LEADER_ELECTION_ID", Value: "hexagonal-operator-leader"})
	role := convert[rbacv1.Role](t, find(t, objs, "Role", "hexagonal-operator-leader-election-role"))
	assert.Equal(t, []string{"hexagonal-operator-leader"}, role.Rules[0].ResourceNames)

	require.Len(t, pod.TopologySpreadConstraints, 1)
	spread := pod.TopologySpreadConstraints[0]
	assert.Equal(t, corev1.TopologySpreadConstraint{
		MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector:    &metav1.LabelSelector{MatchLabels: dep.Spec.Selector.MatchLabels},
		NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor), MatchLabelKeys: []string{appsv1.DefaultDeploymentUniqueLabelKey},
	}, spread)
	sel, err := metav1.LabelSelectorAsSelector(spread.LabelSelector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(labels.Set(dep.Spec.Template.Labels)), "the spread counts the operator's own Pods")
	if pod.Affinity != nil && pod.Affinity.PodAntiAffinity != nil {
		assert.Empty(t, pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "no required anti-affinity: it would leave a surge or one-node replica Pending")
	}
	assert.EqualValues(t, 0, dep.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue())
	pc := convert[schedulingv1.PriorityClass](t, find(t, objs, "PriorityClass", "hexagonal-operator-webhook-critical"))
	assert.Equal(t, pc.Name, pod.PriorityClassName)
	assert.Greater(t, pc.Value, int32(1_000_000), "ahead of ordinary workloads")
	// The API server refuses more for a user PriorityClass; the cluster's
	// own classes (system-cluster-critical: 2000000000) stay ahead.
	assert.LessOrEqual(t, pc.Value, int32(1_000_000_000))
	assert.False(t, pc.GlobalDefault)

	for _, name := range []string{"hexagonal-operator-webhook-service", "hexagonal-operator-controller-manager-metrics-service"} {
		svc := convert[corev1.Service](t, find(t, objs, "Service", name))
		for k, v := range svc.Spec.Selector {
			assert.Equal(t, v, dep.Spec.Template.Labels[k], "%s selects the operator's Pods (%s)", name, k)
		}
	}
	pdb := find(t, objs, "PodDisruptionBudget", operatorServiceAccount)
	minAvailable, _, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "minAvailable")
	assert.EqualValues(t, 1, minAvailable)

	crd := find(t, objs, "CustomResourceDefinition", "chaospods.chaosapps.metamagical.io")
	svc, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service", "name")
	assert.Equal(t, "hexagonal-operator-webhook-service", svc, "the conversion webhook names the prefixed Service")
}

// The cert-manager overlay runs the operator in external mode on
// cert-manager's Secret and serves metrics with a second one, has the CA
// injected, and drops the self-mode RBAC; the other arguments are
// config/default's.
func TestCertManagerOverlay(t *testing.T) {
	t.Parallel()
	objs := render(t, "config", "certmanager")
	cert := find(t, objs, "Certificate", "hexagonal-operator-serving-cert")
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	assert.Contains(t, dns, "hexagonal-operator-webhook-service.hexagonal-operator-system.svc")
	find(t, objs, "Issuer", "hexagonal-operator-selfsigned-issuer")

	metricsCert := find(t, objs, "Certificate", "hexagonal-operator-metrics-cert")
	metricsSecret, _, _ := unstructured.NestedString(metricsCert.Object, "spec", "secretName")
	dns, _, _ = unstructured.NestedStringSlice(metricsCert.Object, "spec", "dnsNames")
	assert.Equal(t, []string{
		"hexagonal-operator-controller-manager-metrics-service.hexagonal-operator-system.svc",
		"hexagonal-operator-controller-manager-metrics-service.hexagonal-operator-system.svc.cluster.local",
	}, dns)
	assert.NotEqual(t, secret, metricsSecret)
	for _, o := range objs {
		assert.False(t, o.GetKind() == "ConfigMap", "the arguments' ConfigMap is local to kustomize: %s", o.GetName())
	}

	dep := convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorServiceAccount))
	c := dep.Spec.Template.Spec.Containers[0]
	base := convert[appsv1.Deployment](t, find(t, render(t, "config", "default"), "Deployment", operatorServiceAccount)).Spec.Template.Spec.Containers[0]
	want := slices.Clone(base.Args)
	want[slices.Index(want, "--webhook-cert-mode=self")] = "--webhook-cert-mode=external"
	want = append(want, "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs")
	assert.Equal(t, want, c.Args)
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "webhook-cert", MountPath: "/tmp/k8s-webhook-server/serving-certs", ReadOnly: true})
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "metrics-cert", MountPath: "/tmp/k8s-metrics-server/metrics-certs", ReadOnly: true})
	assert.Subset(t, c.VolumeMounts, base.VolumeMounts)
	assert.Contains(t, dep.Spec.Template.Spec.Volumes, corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
	assert.Contains(t, dep.Spec.Template.Spec.Volumes, corev1.Volume{Name: "metrics-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: metricsSecret}}})

	for _, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition":
			assert.Equal(t, "hexagonal-operator-system/hexagonal-operator-serving-cert", o.GetAnnotations()["cert-manager.io/inject-ca-from"], o.GetName())
		case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			assert.NotContains(t, o.GetName(), "selfcert", "self-mode RBAC is not needed with cert-manager")
		}
	}
}

// The Prometheus kit renders (its CRDs are not installed here, so it is
// decoded and cross-checked, not dry-run), and its ServiceMonitor selects
// the metrics Service by a port that Service has; config/grafana renders
// the dashboard as a ConfigMap for Grafana's sidecar.
func TestPrometheusKitRenders(t *testing.T) {
	t.Parallel()
	kit := render(t, "config", "prometheus")
	mon := find(t, kit, "ServiceMonitor", "hexagonal-operator-controller-manager-metrics-monitor")
	assert.Equal(t, operatorNamespace, mon.GetNamespace())
	sel, _, _ := unstructured.NestedStringMap(mon.Object, "spec", "selector", "matchLabels")
	endpoints, _, _ := unstructured.NestedSlice(mon.Object, "spec", "endpoints")
	require.Len(t, endpoints, 1)
	ep := endpoints[0].(map[string]any)
	assert.Equal(t, "https", ep["scheme"])
	assert.NotEmpty(t, ep["bearerTokenFile"])

	svc := convert[corev1.Service](t, find(t, render(t, "config", "default"), "Service", "hexagonal-operator-controller-manager-metrics-service"))
	for k, v := range sel {
		assert.Equal(t, v, svc.Labels[k], "ServiceMonitor selects the metrics Service (%s)", k)
	}
	assert.True(t, slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep["port"] }), "port %v", ep["port"])

	rule := find(t, kit, "PrometheusRule", "hexagonal-operator-alerts")
	var alerts []string
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			alerts = append(alerts, r.(map[string]any)["alert"].(string))
		}
	}
	assert.Subset(t, alerts, []string{"HexagonalOperatorReconcileErrors", "HexagonalOperatorWorkQueueGrowing", "HexagonalOperatorWebhookSlow", "HexagonalOperatorNoLeader"})

	cm := find(t, render(t, "config", "grafana"), "ConfigMap", "hexagonal-operator-grafana-dashboard")
	assert.Equal(t, operatorNamespace, cm.GetNamespace())
	assert.Equal(t, "1", cm.GetLabels()["grafana_dashboard"], "labeled for Grafana's dashboard sidecar")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	file, err := os.ReadFile(repoPath(t, "config", "grafana", "hexagonal-operator.json"))
	require.NoError(t, err)
	require.JSONEq(t, string(file), data["hexagonal-operator.json"])
	var dash struct {
		Panels []struct{ Title string } `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(file, &dash))
	assert.GreaterOrEqual(t, len(dash.Panels), 8)
}
