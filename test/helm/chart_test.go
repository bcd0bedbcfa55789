package helm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// configImage returns --set arguments giving the chart config/manager's
// image, the one difference the comparisons allow: the chart's tag
// defaults to its appVersion, config/manager's is latest.
func configImage(t *testing.T) []string {
	t.Helper()
	for _, o := range kustomize(t, repoPath(t, "config", "default")) {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		require.NotEmpty(t, containers)
		image := containers[0].(map[string]any)["image"].(string)
		i := strings.LastIndex(image, ":")
		require.Positive(t, i, "config/manager's image has a tag: %s", image)
		return []string{"--set", "image.repository=" + image[:i], "--set", "image.tag=" + image[i+1:]}
	}
	require.FailNow(t, "config/default renders no Deployment")
	return nil
}

// The chart and config/ are one source: each rendering of the chart gives
// exactly the objects of the matching kustomize rendering, object by
// object and field by field, apart from the labels and annotations only
// Helm adds. The replacements of config/default (names in RBAC
// resourceNames and the Deployment's environment, the namespace in the
// webhooks' selector and the policies' match conditions, the Lease cut
// from the Role's name, the lease duration in the Deployment and the
// leader-lease policy) come out the same under another namespace, prefix
// and duration. With its defaults the chart leaves the namespace to Helm
// (helm install --create-namespace); config/default's Namespace, with its
// Pod Security label, is the chart's with namespace.create.
func TestChartRendersConfig(t *testing.T) {
	t.Parallel()
	image := configImage(t)
	def := func(t *testing.T) []*unstructured.Unstructured {
		return without(kustomize(t, repoPath(t, "config", "default")), "Namespace")
	}
	tests := []struct {
		name      string
		namespace string // the release's
		args      []string
		config    func(t *testing.T) []*unstructured.Unstructured
	}{
		{
			name:      "defaults: config/default",
			namespace: operatorNamespace,
			config:    def,
		},
		{
			name:      "namespace.create: config/default with its Namespace",
			namespace: "default",
			args:      []string{"--set", "namespace.name=" + operatorNamespace, "--set", "namespace.create=true"},
			config:    func(t *testing.T) []*unstructured.Unstructured { return kustomize(t, repoPath(t, "config", "default")) },
		},
		{
			name:      "cert-manager: config/certmanager",
			namespace: operatorNamespace,
			args:      []string{"--set", "certificates.mode=cert-manager"},
			config: func(t *testing.T) []*unstructured.Unstructured {
				return without(kustomize(t, repoPath(t, "config", "certmanager")), "Namespace")
			},
		},
		{
			name:      "network policies: config/default and config/network-policy",
			namespace: operatorNamespace,
			args:      []string{"--set", "networkPolicy.enable=true"},
			config: func(t *testing.T) []*unstructured.Unstructured {
				return append(def(t), overlay(t, "network-policy")...)
			},
		},
		{
			name:      "observability: config/default, config/prometheus and config/grafana",
			namespace: operatorNamespace,
			args: []string{"--set", "metrics.serviceMonitor.enable=true", "--set", "metrics.prometheusRule.enable=true",
				"--set", "grafana.dashboard.enable=true"},
			config: func(t *testing.T) []*unstructured.Unstructured {
				objs := append(def(t), kustomize(t, repoPath(t, "config", "prometheus"))...)
				return append(objs, kustomize(t, repoPath(t, "config", "grafana"))...)
			},
		},
		{
			name:      "another namespace and prefix: config/default with its two lines changed",
			namespace: "acme-ops",
			args:      []string{"--set", "namePrefix=acme-"},
			config: func(t *testing.T) []*unstructured.Unstructured {
				config := copyConfig(t, map[string]string{
					"namespace: " + operatorNamespace: "namespace: acme-ops",
					"namePrefix: hexagonal-operator-": "namePrefix: acme-",
				})
				return without(kustomize(t, filepath.Join(config, "default")), "Namespace")
			},
		},
		{
			name:      "another lease duration: config/default with its one value changed",
			namespace: operatorNamespace,
			args:      []string{"--set", "leaderElection.leaseDuration=42s"},
			config: func(t *testing.T) []*unstructured.Unstructured {
				config := copyConfig(t, map[string]string{"              value: 15s": "              value: 42s"})
				return without(kustomize(t, filepath.Join(config, "default")), "Namespace")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := render(t, tt.namespace, append(slices.Clone(image), tt.args...)...)
			requireSameObjects(t, tt.config(t), got,
				"change dist/chart/templates as config/ changed (each template names the file of config/ it renders; diff the two)")
		})
	}
}

// The files the chart reads instead of templating them are config/'s:
// controller-gen's CRD (which make generate rewrites), the alert rules and
// the dashboard.
func TestChartFilesAreConfigs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ config, chart, fix string }{
		{"config/crd/bases/chaosapps.metamagical.io_chaospods.yaml", "files/crd/chaosapps.metamagical.io_chaospods.yaml", "make generate"},
		{"config/prometheus/alerts.yaml", "files/prometheus/alerts.yaml", "cp config/prometheus/alerts.yaml dist/chart/files/prometheus/"},
		{"config/grafana/hexagonal-operator.json", "files/grafana/hexagonal-operator.json", "cp config/grafana/hexagonal-operator.json dist/chart/files/grafana/"},
	} {
		want, err := os.ReadFile(repoPath(t, tt.config))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(chartPath(t), tt.chart))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "dist/chart/%s is not a copy of %s: %s", tt.chart, tt.config, tt.fix)
	}
}

// The chart is versioned as the operator: VERSION is its version and its
// appVersion, and so the tag of the image it deploys by default, the one
// `make docker-build` builds; the repository is config/manager's.
func TestChartVersionIsVERSION(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(chartPath(t), "Chart.yaml"))
	require.NoError(t, err)
	var chart struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	require.NoError(t, yaml.Unmarshal(data, &chart))
	want := version(t)
	assert.Equal(t, "hexagonal-operator", chart.Name)
	assert.Equal(t, want, chart.Version, "Chart.yaml's version is VERSION")
	assert.Equal(t, want, chart.AppVersion, "Chart.yaml's appVersion is VERSION")

	dep := only[*appsv1.Deployment](t, typed(t, render(t, operatorNamespace)))
	repository := strings.TrimPrefix(configImage(t)[1], "image.repository=")
	assert.Equal(t, repository+":"+want, dep.Spec.Template.Spec.Containers[0].Image)
}

// helm lint --strict passes with the defaults and with every option on.
func TestChartLints(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		nil,
		{"--set", "certificates.mode=cert-manager", "--set", "metrics.serviceMonitor.enable=true", "--set", "metrics.prometheusRule.enable=true",
			"--set", "grafana.dashboard.enable=true", "--set", "networkPolicy.enable=true"},
		{"--set", "certificates.mode=files", "--set", "certificates.files.secretName=tls", "--set", "admissionPolicies.enable=false",
			"--set", "crd.enable=false", "--set", "metrics.secure=false"},
	} {
		out := helm(t, helmEnv(t, ""), append([]string{"lint", "--strict", chartPath(t), "--namespace", operatorNamespace}, args...)...)
		assert.Contains(t, out, "1 chart(s) linted, 0 chart(s) failed", "%v", args)
	}
}

// testCA stands for the PEM of a CA: the chart writes it as it is.
const testCA = "-----BEGIN CERTIFICATE-----\nZmFrZSBDQQ==\n-----END CERTIFICATE-----\n"

// Each option of values.yaml renders objects that decode strictly into
// their Go types and does what values.yaml says, and only that.
func TestChartValues(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(caFile, []byte(testCA), 0o600))
	podWebhooks := []string{"pod-annotator.hexagonal-operator.io", "pod-validator.hexagonal-operator.io"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, r rendered)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, r rendered) {
				crd := only[*apiextensionsv1.CustomResourceDefinition](t, r.typed)
				assert.Equal(t, "keep", crd.Annotations["helm.sh/resource-policy"], "the CRD, and so every ChaosPod, outlives helm uninstall")
				assert.Len(t, all[*admissionregistrationv1.ValidatingAdmissionPolicy](r.typed), 5)
				dep := only[*appsv1.Deployment](t, r.typed)
				assert.Equal(t, "hexagonal-operator-webhook-critical", dep.Spec.Template.Spec.PriorityClassName)
				assert.NotContains(t, dep.Spec.Template.Labels, "helm.sh/chart", "a chart upgrade alone does not roll the Pods")
			},
		},
		{
			name: "files mode",
			args: []string{"--set", "certificates.mode=files", "--set", "certificates.files.secretName=my-webhook-tls",
				"--set-file", "certificates.files.caBundle=" + caFile, "--set", "certificates.files.metricsSecretName=my-metrics-tls"},
			check: func(t *testing.T, r rendered) {
				c := only[*appsv1.Deployment](t, r.typed).Spec.Template.Spec
				assert.Contains(t, c.Containers[0].Args, "--webhook-cert-mode=external")
				assert.Contains(t, c.Containers[0].Args, "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs")
				assert.Contains(t, c.Volumes, corev1.Volume{Name: "webhook-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-webhook-tls"}}})
				assert.Contains(t, c.Volumes, corev1.Volume{Name: "metrics-cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "my-metrics-tls"}}})
				assert.Contains(t, c.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "webhook-cert", MountPath: "/tmp/k8s-webhook-server/serving-certs", ReadOnly: true})
				for _, w := range only[*admissionregistrationv1.MutatingWebhookConfiguration](t, r.typed).Webhooks {
					assert.Equal(t, testCA, string(w.ClientConfig.CABundle), w.Name)
				}
				for _, w := range only[*admissionregistrationv1.ValidatingWebhookConfiguration](t, r.typed).Webhooks {
					assert.Equal(t, testCA, string(w.ClientConfig.CABundle), w.Name)
				}
				crd := only[*apiextensionsv1.CustomResourceDefinition](t, r.typed)
				assert.Equal(t, testCA, string(crd.Spec.Conversion.Webhook.ClientConfig.CABundle))
				for _, o := range r.objs {
					assert.NotContains(t, o.GetName(), "selfcert", "no self-mode RBAC")
					assert.NotEqual(t, "cert-manager.io", o.GroupVersionKind().Group)
				}
			},
		},
		{
			name:    "files mode without a Secret",
			args:    []string{"--set", "certificates.mode=files"},
			wantErr: "certificates.files.secretName is required",
		},
		{
			name:    "an unknown certificate mode",
			args:    []string{"--set", "certificates.mode=acme"},
			wantErr: "at '/certificates/mode': value must be one of 'self', 'cert-manager', 'files'",
		},
		{
			name:    "a misspelt value",
			args:    []string{"--set", "replica=3"},
			wantErr: "additional properties 'replica' not allowed",
		},
		{
			name:    "a lease duration that is no duration",
			args:    []string{"--set", "leaderElection.leaseDuration=15"},
			wantErr: "at '/leaderElection/leaseDuration'",
		},
		{
			name: "the Pod webhooks scoped",
			args: []string{
				"--set-json", `podWebhooks.objectSelector={"matchLabels":{"hexagonal-operator.io/enabled":"true"}}`,
				"--set-json", `podWebhooks.namespaceSelector={"matchLabels":{"team":"shop"},"matchExpressions":[{"key":"tier","operator":"In","values":["web"]}]}`,
				"--set", "podWebhooks.failurePolicy=Ignore",
			},
			check: func(t *testing.T, r rendered) {
				type hook struct {
					name          string
					policy        *admissionregistrationv1.FailurePolicyType
					namespaces    *metav1.LabelSelector
					objects       *metav1.LabelSelector
					matchesByUser bool
				}
				var hooks []hook
				for _, w := range only[*admissionregistrationv1.MutatingWebhookConfiguration](t, r.typed).Webhooks {
					hooks = append(hooks, hook{w.Name, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, len(w.MatchConditions) > 0})
				}
				for _, w := range only[*admissionregistrationv1.ValidatingWebhookConfiguration](t, r.typed).Webhooks {
					hooks = append(hooks, hook{w.Name, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, len(w.MatchConditions) > 0})
				}
				require.Len(t, hooks, 7)
				for _, h := range hooks {
					if !slices.Contains(podWebhooks, h.name) {
						assert.Equal(t, admissionregistrationv1.Fail, *h.policy, "%s keeps failing closed", h.name)
						assert.Nil(t, h.objects, h.name)
						if h.matchesByUser {
							assert.Nil(t, h.namespaces, "the operator's Pod validator stays unscoped")
						}
						continue
					}
					assert.Equal(t, admissionregistrationv1.Ignore, *h.policy, h.name)
					assert.Equal(t, &metav1.LabelSelector{MatchLabels: map[string]string{"hexagonal-operator.io/enabled": "true"}}, h.objects, h.name)
					assert.Equal(t, &metav1.LabelSelector{
						MatchLabels: map[string]string{"team": "shop"},
						MatchExpressions: []metav1.LabelSelectorRequirement{
							{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-public", "kube-node-lease", operatorNamespace}},
							{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
						},
					}, h.namespaces, "%s: the namespaces it never sees stay excluded", h.name)
				}
			},
		},
		{
			name: "the Deployment's values",
			args: []string{
				"--set", "replicas=3", "--set", "logLevel=debug", "--set", "priorityClassName=system-cluster-critical",
				"--set", "image.repository=registry.example:5000/team/operator", "--set", "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				"--set", "image.pullPolicy=Always",
				"--set-json", `resources={"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":null,"memory":"1Gi"}}`,
				"--set-json", `nodeSelector={"kubernetes.io/os":"linux"}`,
				"--set-json", `tolerations=[{"key":"dedicated","operator":"Equal","value":"operators","effect":"NoSchedule"}]`,
				"--set-json", `extraArgs=["--chaospod-workers=64"]`,
				"--set-json", `extraEnv=[{"name":"GOMAXPROCS","value":"2"}]`,
			},
			check: func(t *testing.T, r rendered) {
				dep := only[*appsv1.Deployment](t, r.typed)
				assert.EqualValues(t, 3, *dep.Spec.Replicas)
				pod := dep.Spec.Template.Spec
				c := pod.Containers[0]
				assert.Equal(t, "registry.example:5000/team/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", c.Image)
				assert.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
				assert.Equal(t, []string{"--leader-elect", "--webhook-cert-mode=self", "--health-probe-bind-address=:8081",
					"--metrics-bind-address=:8443", "--zap-log-level=debug", "--chaospod-workers=64"}, c.Args)
				assert.Equal(t, corev1.EnvVar{Name: "GOMAXPROCS", Value: "2"}, c.Env[len(c.Env)-1])
				assert.Equal(t, corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
				}, c.Resources)
				assert.Equal(t, "system-cluster-critical", pod.PriorityClassName)
				assert.Empty(t, all[*schedulingv1.PriorityClass](r.typed), "a class given is used, none created")
				assert.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, pod.NodeSelector)
				assert.Equal(t, []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "operators", Effect: corev1.TaintEffectNoSchedule}}, pod.Tolerations)
				assert.Len(t, pod.TopologySpreadConstraints, 1, "the spread stays")
			},
		},
		{
			name: "plain HTTP metrics",
			args: []string{"--set", "metrics.secure=false", "--set", "metrics.serviceMonitor.enable=true"},
			check: func(t *testing.T, r rendered) {
				assert.Contains(t, only[*appsv1.Deployment](t, r.typed).Spec.Template.Spec.Containers[0].Args, "--metrics-secure=false")
				for _, r := range all[*rbacv1.ClusterRole](r.typed) {
					assert.NotContains(t, r.Name, "metrics-auth", "no reviews to create")
				}
				endpoint := serviceMonitorEndpoint(t, r.objs)
				assert.Equal(t, "http", endpoint["scheme"])
				assert.NotContains(t, endpoint, "tlsConfig")
				assert.NotContains(t, endpoint, "bearerTokenFile")
			},
		},
		{
			name: "cert-manager's metrics certificate verified by the ServiceMonitor",
			args: []string{"--set", "certificates.mode=cert-manager", "--set", "metrics.serviceMonitor.enable=true"},
			check: func(t *testing.T, r rendered) {
				assert.Equal(t, map[string]any{
					"ca":         map[string]any{"secret": map[string]any{"name": "hexagonal-operator-metrics-server-cert", "key": "ca.crt"}},
					"serverName": "hexagonal-operator-controller-manager-metrics-service." + operatorNamespace + ".svc",
				}, serviceMonitorEndpoint(t, r.objs)["tlsConfig"])
			},
		},
		{
			name: "no admission policies",
			args: []string{"--set", "admissionPolicies.enable=false"},
			check: func(t *testing.T, r rendered) {
				assert.Empty(t, all[*admissionregistrationv1.ValidatingAdmissionPolicy](r.typed))
				assert.Empty(t, all[*admissionregistrationv1.ValidatingAdmissionPolicyBinding](r.typed))
				assert.Len(t, all[*admissionregistrationv1.ValidatingWebhookConfiguration](r.typed), 1, "the webhooks stay")
			},
		},
		{
			name: "no CRD",
			args: []string{"--set", "crd.enable=false"},
			check: func(t *testing.T, r rendered) {
				assert.Empty(t, all[*apiextensionsv1.CustomResourceDefinition](r.typed))
			},
		},
		{
			name: "the CRD not kept",
			args: []string{"--set", "crd.keep=false"},
			check: func(t *testing.T, r rendered) {
				assert.NotContains(t, only[*apiextensionsv1.CustomResourceDefinition](t, r.typed).Annotations, "helm.sh/resource-policy")
			},
		},
		{
			name:    "namespace.create for the release's namespace",
			args:    []string{"--set", "namespace.create=true"},
			wantErr: "namespace.create renders a namespace other than the release's",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, err := renderErr(t, operatorNamespace, tt.args...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, rendered{objs: objs, typed: typed(t, objs)})
		})
	}
}

// rendered is a rendering of the chart, decoded, and its objects of the
// kinds client-go knows, typed.
type rendered struct {
	objs  []*unstructured.Unstructured
	typed []runtime.Object
}

func serviceMonitorEndpoint(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			require.Len(t, endpoints, 1)
			return endpoints[0].(map[string]any)
		}
	}
	require.FailNow(t, "no ServiceMonitor rendered")
	return nil
}
