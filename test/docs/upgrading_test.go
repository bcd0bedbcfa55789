package docs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// readManifest decodes one YAML manifest of the repository into out.
func readManifest(t *testing.T, rel string, out any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(rel)))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, out), rel)
}

// docs/upgrading.md states the CRD's versions, the rollout settings and
// the stop budget as the manifests and the binary have them.
func TestUpgradingMatchesTheManifests(t *testing.T) {
	t.Parallel()
	doc := strings.Join(strings.Fields(readDoc(t, "docs/upgrading.md")), " ")
	says := func(phrase, why string) {
		t.Helper()
		assert.True(t, strings.Contains(doc, phrase), "docs/upgrading.md does not say %q (%s)", phrase, why)
	}

	// The CRD's fields this page speaks of (apiextensions' types are not
	// a dependency of the module).
	var crd struct {
		Spec struct {
			Versions []struct {
				Name            string
				Served, Storage bool
			}
			Conversion *struct {
				Strategy string
				Webhook  *struct {
					ClientConfig struct {
						Service struct{ Path string }
					} `json:"clientConfig"`
				}
			}
		}
	}
	readManifest(t, "config/crd/bases/chaosapps.metamagical.io_chaospods.yaml", &crd)
	require.NotEmpty(t, crd.Spec.Versions)
	for _, v := range crd.Spec.Versions {
		switch {
		case v.Storage:
			says("`"+v.Name+"` is the storage version", "the CRD stores "+v.Name)
			says("`status.storedVersions` is `["+v.Name+"]`", "objects are stored as "+v.Name)
		case v.Served:
			says("`"+v.Name+"` is served", "the CRD serves "+v.Name)
		}
	}
	patch := crd
	readManifest(t, "config/crd/patches/webhook_in_chaospods.yaml", &patch)
	require.NotNil(t, patch.Spec.Conversion)
	require.NotNil(t, patch.Spec.Conversion.Webhook)
	assert.Equal(t, "Webhook", patch.Spec.Conversion.Strategy)
	says("(`"+patch.Spec.Conversion.Webhook.ClientConfig.Service.Path+"`", "the conversion webhook's path")

	var dep appsv1.Deployment
	readManifest(t, "config/manager/manager.yaml", &dep)
	require.NotNil(t, dep.Spec.Replicas)
	require.NotNil(t, dep.Spec.Strategy.RollingUpdate)
	require.NotNil(t, dep.Spec.Template.Spec.TerminationGracePeriodSeconds)
	says("`replicas: "+strconv.Itoa(int(*dep.Spec.Replicas))+"`", "config/manager's replicas")
	says("`maxUnavailable: "+dep.Spec.Strategy.RollingUpdate.MaxUnavailable.String()+"`", "config/manager's rollout")
	says("`maxSurge: "+dep.Spec.Strategy.RollingUpdate.MaxSurge.String()+"`", "config/manager's rollout")
	says("`terminationGracePeriodSeconds` of "+strconv.Itoa(int(*dep.Spec.Template.Spec.TerminationGracePeriodSeconds)), "config/manager's grace period")

	var pdb policyv1.PodDisruptionBudget
	readManifest(t, "config/manager/pdb.yaml", &pdb)
	require.NotNil(t, pdb.Spec.MinAvailable)
	says("`minAvailable: "+pdb.Spec.MinAvailable.String()+"`", "config/manager's PodDisruptionBudget")

	var usage bytes.Buffer
	config.Usage(&usage)
	defaults := flagDefaults(usage.String())
	for _, flag := range []string{"webhook-shutdown-delay", "shutdown-timeout"} {
		d := defaults[flag]
		require.NotEmpty(t, d, "--%s has a default", flag)
		says("`--"+flag+"` ("+strings.TrimSuffix(d, "s")+" s", "the flag's default, "+d)
	}
}

// `kubectl apply -k config/default` creates the objects in the order
// docs/upgrading.md gives: the CRD and the RBAC before the Deployment,
// the admission policies after it, the webhook configurations last.
func TestDefaultAppliesInTheUpgradeOrder(t *testing.T) {
	t.Parallel()
	objs, err := controlplane.Manifests(filepath.Join(repoRoot(t), "config", "default"))
	require.NoError(t, err)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	first := func(kind string) int {
		i := slices.Index(kinds, kind)
		require.GreaterOrEqual(t, i, 0, "config/default renders a %s: %v", kind, kinds)
		return i
	}
	order := []string{"CustomResourceDefinition", "ClusterRole", "Deployment", "ValidatingAdmissionPolicy", "MutatingWebhookConfiguration"}
	for i := 1; i < len(order); i++ {
		assert.Less(t, lastOf(kinds, order[i-1]), first(order[i]), "every %s comes before the first %s: %v", order[i-1], order[i], kinds)
	}
	tail := kinds[len(kinds)-2:]
	assert.ElementsMatch(t, []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}, tail, "the webhook configurations come last: %v", kinds)
}

func lastOf(kinds []string, kind string) int {
	for i := len(kinds) - 1; i >= 0; i-- {
		if kinds[i] == kind {
			return i
		}
	}
	return -1
}

// The overlay docs/troubleshooting.md gives to scope the Pod webhooks
// renders, and gives both Pod webhooks, and only them, the selector.
func TestScopingOverlayOfTroubleshootingScopesBothPodWebhooks(t *testing.T) {
	t.Parallel()
	overlay := fencedBlock(t, readDoc(t, "docs/troubleshooting.md"), "# kustomization.yaml of your overlay")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "config"), os.DirFS(filepath.Join(repoRoot(t), "config"))))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "overlay"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay", "kustomization.yaml"), []byte(overlay), 0o600))
	objs, err := controlplane.Manifests(filepath.Join(dir, "overlay"))
	require.NoError(t, err)

	scoped := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() != "MutatingWebhookConfiguration" && o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			h := h.(map[string]any)
			name := h["name"].(string)
			labels, _, _ := unstructured.NestedStringMap(h, "objectSelector", "matchLabels")
			isPod := strings.HasPrefix(name, "pod-")
			assert.Equal(t, isPod, len(labels) > 0, "webhook %s: objectSelector %v", name, labels)
			if isPod {
				scoped[name] = true
			}
		}
	}
	assert.Len(t, scoped, 2, "both Pod webhooks are scoped: %v", scoped)
}

// fencedBlock returns the fenced code block whose first line is first.
func fencedBlock(t *testing.T, text, first string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n"+first+"\n")
	require.True(t, ok, "a code block starting %q", first)
	body, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok, "the code block starting %q ends", first)
	return first + "\n" + body + "\n"
}
