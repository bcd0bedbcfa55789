package e2e_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// networkPolicyLine is config/default's opt-in line for config/network-policy.
const networkPolicyLine = "#- ../network-policy"

// copyConfig is operatortest.CopyConfig of this repository's config/.
func copyConfig(t *testing.T, edits map[string]string) string {
	t.Helper()
	return operatortest.CopyConfig(t, repoPath(t, "config"), edits)
}

// kustomizations lists the folders under root that hold a kustomization.
func kustomizations(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "kustomization.yaml" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	}))
	return dirs
}

// buildNewestKustomize builds hack/tools/kustomize (the standalone
// kustomize module, pinned in its own go.mod, so that it never enters the
// operator's) into dir.
func buildNewestKustomize(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "kustomize")
	out, err := exec.CommandContext(ctx, "go", "build", "-C", repoPath(t, "hack", "tools", "kustomize"), "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "build hack/tools/kustomize:\n%s", out)
	return bin
}

// renderWith runs bin (kubectl kustomize, or hack/tools/kustomize) on dir
// and decodes its objects, failing the test on any error.
func renderWith(t *testing.T, dir string, bin string, args ...string) []map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append(args, dir)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s %s: %s", filepath.Base(bin), strings.Join(args, " "), dir, stderr.String())
	dec := yaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	var objs []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		if len(m) > 0 {
			objs = append(objs, m)
		}
	}
	require.NotEmpty(t, objs, "%s renders nothing", dir)
	return objs
}

// Every kustomization under config/ renders, and renders the same objects,
// with kubectl's bundled kustomize (what `kubectl apply -k` uses) and with
// the newest standalone kustomize module, which knows kinds the bundled one
// does not (admission policies are cluster-scoped). So is config/default
// with its opt-in NetworkPolicies and another namespace and prefix.
func TestEveryKustomizationRendersAlikeWithBothKustomizes(t *testing.T) {
	t.Parallel()
	kubectlBin, err := controlplane.Binary("kubectl")
	require.NoError(t, err)
	newest := buildNewestKustomize(t, t.TempDir())

	root := repoPath(t, "config")
	dirs := kustomizations(t, root)
	for _, want := range []string{"default", "certmanager", "samples", "network-policy", "prometheus", "crd", "rbac", "manager", "webhook", "policy"} {
		assert.Contains(t, dirs, filepath.Join(root, want))
	}
	variant := copyConfig(t, map[string]string{
		networkPolicyLine:                      "- ../network-policy",
		"namespace: hexagonal-operator-system": "namespace: acme-ops",
		"namePrefix: hexagonal-operator-":      "namePrefix: acme-",
	})
	dirs = append(dirs, filepath.Join(variant, "default"), filepath.Join(variant, "certmanager"))

	for _, dir := range dirs {
		name := strings.TrimPrefix(dir, root+string(filepath.Separator))
		if strings.HasPrefix(dir, variant) {
			name = "acme-with-network-policy/" + filepath.Base(dir)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bundled := renderWith(t, dir, kubectlBin, "kustomize")
			standalone := renderWith(t, dir, newest)
			assert.Equal(t, bundled, standalone, "kubectl kustomize and kustomize build render %s differently", name)
		})
	}
}

// `kubectl apply -k config/samples` creates the samples (the v2 ChaosPod
// through the operator's conversion webhook, both defaulted by its
// webhooks), the operator acts on them, and `kubectl delete -k` removes
// them.
func TestSamplesApplyWithKubectl(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	require.NoError(t, cp.EnsureNamespace(ctx, operatorNamespace)) // the Lease's
	ports := operatorproc.FreePorts(t, 3)
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	server := controlplane.WebhookServer{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), &server)
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), server)
	require.NoError(t, err)
	// As the admin: RBAC is not what this test is about.
	startDeployedLike(t, nil, cp.KubeconfigPath, ports, "--webhook-cert-mode=external", "--webhook-cert-dir="+certDir)

	const ns = "samples"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	kubectl(t, cp, "apply", "-k", "config/samples", "-n", ns)

	samples := render(t, "config", "samples")
	assert.ElementsMatch(t, []string{"ChaosPod chaospod-v1-sample", "ChaosPod chaospod-v2-sample", "ReplicaSet replicaset-sample"}, names(samples))
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	for _, s := range samples {
		s.SetNamespace(ns)
	}
	requireAllPresent(t, cp, samples)
	for _, name := range []string{"chaospod-v1-sample", "chaospod-v2-sample"} {
		// Read at v1: the v2 sample is converted by the operator.
		got, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		next, _, _ := unstructured.NestedString(got.Object, "spec", "nextStop")
		assert.NotEmpty(t, next, "%s defaulted", name)
	}
	v2, err := dyn.Resource(chaosv2.GroupVersionResource).Namespace(ns).Get(ctx, "chaospod-v2-sample", metav1.GetOptions{})
	require.NoError(t, err)
	interval, _, _ := unstructured.NestedString(v2.Object, "spec", "stop", "interval")
	assert.Equal(t, "15s", interval)
	require.Eventually(t, func() bool {
		rs, err := cp.Clientset().AppsV1().ReplicaSets(ns).Get(ctx, "replicaset-sample", metav1.GetOptions{})
		return err == nil && rs.Labels["hello"] == "world"
	}, 30*time.Second, 100*time.Millisecond, "the sample ReplicaSet labeled by the operator")

	kubectl(t, cp, "delete", "-k", "config/samples", "-n", ns)
	require.Eventually(t, func() bool {
		present, _ := objectState(t, cp, samples)
		return len(present) == 0
	}, 30*time.Second, 100*time.Millisecond, "kubectl delete -k config/samples removes them")
}

// isAggregated tells the ClusterRoles of config/rbac meant for people: they
// carry a label that aggregates them into a built-in role.
func isAggregated(o *unstructured.Unstructured) bool {
	for k := range o.GetLabels() {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			return true
		}
	}
	return false
}

// The ChaosPod admin, editor and viewer roles reach people through the
// built-in roles: a user with "edit" in a namespace creates ChaosPods there,
// one with "view" lists them and cannot create one, one with "admin" may do
// anything to them. Nothing binds them to the operator.
func TestChaosPodRolesAggregateIntoTheBuiltInRoles(t *testing.T) {
	t.Parallel()
	objs := render(t, "config", "default")
	var aggregated []*unstructured.Unstructured
	for _, o := range objs {
		if isAggregated(o) {
			aggregated = append(aggregated, o)
		}
	}
	require.ElementsMatch(t, []string{
		"ClusterRole hexagonal-operator-chaospod-admin-role",
		"ClusterRole hexagonal-operator-chaospod-editor-role",
		"ClusterRole hexagonal-operator-chaospod-viewer-role",
	}, names(aggregated))
	for _, o := range objs {
		switch o.GetKind() {
		case "RoleBinding", "ClusterRoleBinding":
			ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			assert.NotContains(t, ref, "chaospod-admin-role", o.GetName())
			assert.NotContains(t, ref, "chaospod-editor-role", o.GetName())
			assert.NotContains(t, ref, "chaospod-viewer-role", o.GetName())
		}
	}

	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	// The controller that fills aggregated roles, alone.
	kcm, err := controlplane.Binary("kube-controller-manager")
	require.NoError(t, err)
	agg, err := controlplane.StartProcess("clusterrole-aggregation", kcm, t.TempDir(),
		"--kubeconfig="+cp.KubeconfigPath, "--controllers=clusterrole-aggregation", "--leader-elect=false", "--secure-port=0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = agg.Stop(5 * time.Second) })

	require.NoError(t, cp.Apply(ctx, aggregated...))
	_, err = cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), nil)
	require.NoError(t, err)
	const ns = "team"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	admin := cp.Clientset()
	for user, role := range map[string]string{"alice": "edit", "bob": "view", "carol": "admin"} {
		_, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	as := func(user string) dynamic.ResourceInterface {
		dyn, err := dynamic.NewForConfig(cp.ImpersonatedConfig(user))
		require.NoError(t, err)
		return dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
	}

	var created *unstructured.Unstructured
	require.Eventually(t, func() bool { // the aggregation controller is asynchronous
		created, err = as("alice").Create(ctx, chaosPodV1("by-alice"), metav1.CreateOptions{})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "edit creates a ChaosPod: %v", err)
	assert.Equal(t, "by-alice", created.GetName())
	_, err = as("alice").Get(ctx, "by-alice", metav1.GetOptions{})
	require.NoError(t, err)

	list, err := as("bob").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "view lists ChaosPods")
	assert.Len(t, list.Items, 1)
	_, err = as("bob").Create(ctx, chaosPodV1("by-bob"), metav1.CreateOptions{})
	require.True(t, apierrors.IsForbidden(err), "view cannot create a ChaosPod: %v", err)
	err = as("bob").Delete(ctx, "by-alice", metav1.DeleteOptions{})
	require.True(t, apierrors.IsForbidden(err), "view cannot delete a ChaosPod: %v", err)

	_, err = as("dave").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "no role, no ChaosPods: %v", err)
	_, err = as("alice").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	require.NoError(t, as("carol").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}), "admin may do anything to ChaosPods")
	list, err = as("carol").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, list.Items)
}

// config/network-policy is opt-in: config/default installs no
// NetworkPolicy until its line is uncommented. Then the operator's Pods
// admit TCP 9443 (webhooks, from anywhere: the API server is outside the Pod
// network) and TCP 8443 (metrics) from namespaces labeled metrics=enabled,
// and nothing else; kubectl applies them. No network plugin enforces them
// here: their shape is what is checked.
func TestNetworkPoliciesAreOptIn(t *testing.T) {
	t.Parallel()
	for _, o := range render(t, "config", "default") {
		assert.NotEqual(t, "NetworkPolicy", o.GetKind(), "config/default installs no NetworkPolicy by default")
	}
	config := copyConfig(t, map[string]string{networkPolicyLine: "- ../network-policy"})
	objs, err := controlplane.Manifests(filepath.Join(config, "default"))
	require.NoError(t, err)
	dep := convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorServiceAccount))
	podLabels := labels.Set(dep.Spec.Template.Labels)
	containerPorts := map[string]int32{}
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		containerPorts[p.Name] = p.ContainerPort
	}

	type admitted struct {
		port int32
		from string // "" for anywhere
	}
	var policies []*unstructured.Unstructured
	var got []admitted
	for _, o := range objs {
		if o.GetKind() != "NetworkPolicy" {
			continue
		}
		policies = append(policies, o)
		np := convert[networkingv1.NetworkPolicy](t, o)
		assert.Equal(t, operatorNamespace, np.Namespace)
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		require.NoError(t, err)
		assert.False(t, sel.Empty(), "%s selects the operator's Pods, not all", np.Name)
		assert.True(t, sel.Matches(podLabels), "%s selects the operator's Pods", np.Name)
		assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
		for _, rule := range np.Spec.Ingress {
			require.NotEmpty(t, rule.Ports, "%s admits every port", np.Name)
			from := ""
			for _, peer := range rule.From {
				require.NotNil(t, peer.NamespaceSelector, "%s", np.Name)
				require.Nil(t, peer.IPBlock)
				from = metav1.FormatLabelSelector(peer.NamespaceSelector)
			}
			for _, p := range rule.Ports {
				assert.Equal(t, corev1.ProtocolTCP, *p.Protocol)
				got = append(got, admitted{port: p.Port.IntVal, from: from})
			}
		}
	}
	assert.ElementsMatch(t, []string{"NetworkPolicy hexagonal-operator-allow-webhook-traffic", "NetworkPolicy hexagonal-operator-allow-metrics-traffic"}, names(policies))
	assert.ElementsMatch(t, []admitted{{port: containerPorts["webhook"]}, {port: containerPorts["metrics"], from: "metrics=enabled"}}, got)
	assert.Equal(t, []int32{9443, 8443}, []int32{containerPorts["webhook"], containerPorts["metrics"]})

	cp := controlplane.StartT(t, controlplane.Options{})
	kubectl(t, cp, "apply", "-k", filepath.Join(config, "default"))
	requireAllPresent(t, cp, objs)
	applied, err := cp.Clientset().NetworkingV1().NetworkPolicies(operatorNamespace).Get(context.Background(), "hexagonal-operator-allow-metrics-traffic", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"metrics": "enabled"}, applied.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels)
}

// `make deploy-certmanager IMG=…` applies config/certmanager with that
// image, and `make undeploy-certmanager` removes it all. cert-manager
// itself is not installed: its Issuer and Certificate kinds come from
// stand-in CRDs (testdata/cert-manager-crds.yaml) with cert-manager's
// schema for the fields used, so the overlay's own objects are applied and
// validated, not issued.
func TestCertManagerOverlayDeploys(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{ControllerManager: true})
	ctx := context.Background()
	_, err := cp.InstallCRDs(ctx, repoPath(t, "test", "e2e", "testdata"), nil)
	require.NoError(t, err)
	objs := render(t, "config", "certmanager")

	const img = "registry.example:5000/team/operator:v4"
	makeTarget(t, cp, "deploy-certmanager", "IMG="+img)
	requireAllPresent(t, cp, objs)
	assert.Equal(t, img, deploymentImage(t, cp))
	dep, err := cp.Clientset().AppsV1().Deployments(operatorNamespace).Get(ctx, operatorServiceAccount, metav1.GetOptions{})
	require.NoError(t, err)
	args := dep.Spec.Template.Spec.Containers[0].Args
	assert.Contains(t, args, "--webhook-cert-mode=external")
	assert.Contains(t, args, "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs")
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	certs, err := dyn.Resource(certificateResource).Namespace(operatorNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, certs.Items, 2, "the webhook's and the metrics server's")

	makeTarget(t, cp, "undeploy-certmanager")
	requireNothingLeft(t, cp, objs)
}

var certificateResource = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// The image targets run $(CONTAINER_TOOL), docker unless set, so podman
// works; docker-buildx builds for $(PLATFORMS); `make help` lists the
// targets a kubebuilder user looks for.
func TestMakeImageTargetsUseTheContainerTool(t *testing.T) {
	t.Parallel()
	makeN := func(args ...string) string {
		cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
		cmd.Dir = repoPath(t)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "CONTAINER_TOOL=") || strings.HasPrefix(kv, "PLATFORMS=")
		})
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	for _, tool := range []string{"docker", "podman"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			vars := []string{"-n", "IMG=registry.example/op:v1"}
			if tool != "docker" {
				vars = append(vars, "CONTAINER_TOOL="+tool)
			}
			build := makeN(append(vars, "docker-build")...)
			assert.Contains(t, build, tool+" build ")
			assert.Contains(t, build, "-t registry.example/op:v1 .")
			assert.Equal(t, tool+" push registry.example/op:v1\n", makeN(append(vars, "docker-push")...))
			buildx := makeN(append(vars, "docker-buildx")...)
			assert.Contains(t, buildx, tool+" buildx build ")
			assert.Contains(t, buildx, tool+" build --platform=linux/arm64,linux/amd64,")
			assert.Contains(t, buildx, "-f Dockerfile.cross")
			other := map[string]string{"docker": "podman", "podman": "docker"}[tool]
			assert.NotContains(t, build+buildx, other+" ")
		})
	}
	// docker-buildx's Dockerfile copy: the build stage runs on the
	// builder's platform and cross-compiles for the target's; the final
	// stage is the target's.
	sed, _, _ := strings.Cut(makeN("-n", "docker-buildx"), "\n")
	dir := t.TempDir()
	dockerfile, err := os.ReadFile(repoPath(t, "Dockerfile"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o600))
	cmd := exec.Command("bash", "-c", sed)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", sed, out)
	cross, err := os.ReadFile(filepath.Join(dir, "Dockerfile.cross"))
	require.NoError(t, err)
	var froms []string
	for _, line := range strings.Split(string(cross), "\n") {
		if strings.HasPrefix(line, "FROM ") {
			froms = append(froms, line)
		}
	}
	require.Len(t, froms, 2)
	assert.True(t, strings.HasPrefix(froms[0], "FROM --platform=${BUILDPLATFORM} golang:"), froms[0])
	assert.NotContains(t, froms[1], "--platform")
	assert.Contains(t, string(cross), "GOOS=${TARGETOS} GOARCH=${TARGETARCH} make build")

	var listed []string
	for _, line := range strings.Split(makeN("help"), "\n") {
		line = strings.NewReplacer("\033[36m", "", "\033[0m", "").Replace(line)
		if f := strings.Fields(line); len(f) > 1 {
			listed = append(listed, f[0])
		}
	}
	assert.Subset(t, listed, []string{"docker-build", "docker-push", "docker-buildx", "test-e2e", "vet", "lint", "lint-fix", "deploy", "deploy-certmanager", "undeploy-certmanager", "build-installer"})
	assert.Contains(t, makeN("-n", "test-e2e"), "go test -race -timeout 40m ./test/e2e/...")
}
