package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

const (
	// operatorNamespace is config/default's namespace, and the release's
	// in the renders compared with it.
	operatorNamespace = "hexagonal-operator-system"
	release           = "hexagonal-operator"
	// commandTimeout bounds every helm and kubectl the tests run.
	commandTimeout = 3 * time.Minute
)

func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(append([]string{root}, elem...)...)
}

func chartPath(t *testing.T) string { return repoPath(t, "dist", "chart") }

// version is VERSION's: the release under way.
func version(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(repoPath(t, "VERSION"))
	require.NoError(t, err)
	return strings.TrimSpace(string(data))
}

// helmEnv keeps helm's cache, configuration and data in the test's
// temporary folder, so that a test leaves nothing in $HOME, with
// kubeconfig as the cluster when given.
func helmEnv(t *testing.T, kubeconfig string) []string {
	t.Helper()
	home := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "HELM_")
	})
	env = append(env, "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	if kubeconfig != "" {
		env = append(env, "KUBECONFIG="+kubeconfig)
	}
	return env
}

// runHelm runs bin/helm in the repository root and returns its stdout, or
// an error carrying its stderr.
func runHelm(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	bin, err := controlplane.Binary("helm")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repoPath(t)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// helm runs bin/helm and fails the test when it fails.
func helm(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, err := runHelm(t, env, args...)
	require.NoError(t, err)
	return out
}

// render is `helm template` of the chart into namespace with args (--set
// and the like), decoded.
func render(t *testing.T, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderErr(t, namespace, args...)
	require.NoError(t, err)
	return objs
}

func renderErr(t *testing.T, namespace string, args ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	out, err := runHelm(t, helmEnv(t, ""), append([]string{"template", release, chartPath(t), "--namespace", namespace}, args...)...)
	if err != nil {
		return nil, err
	}
	return decode(t, out), nil
}

func decode(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		require.NoError(t, err)
		if len(m) > 0 { // documents of comments only
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// kustomize renders a folder of config/ (or a copy) with bin/kubectl.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controlplane.Manifests(dir)
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

// overlay renders folder (of config/) as config/default names things:
// with its namespace and name prefix, for the folders config/default
// leaves out (config/network-policy).
func overlay(t *testing.T, folder string) []*unstructured.Unstructured {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, repoPath(t, "config", folder))
	require.NoError(t, err)
	kustomization := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nnamePrefix: hexagonal-operator-\nresources:\n- %s\n", operatorNamespace, rel)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600))
	return kustomize(t, dir)
}

// copyConfig is operatortest.CopyConfig of this repository's config/.
func copyConfig(t *testing.T, edits map[string]string) string {
	t.Helper()
	return operatortest.CopyConfig(t, repoPath(t, "config"), edits)
}

func without(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool { return o.GetKind() == kind })
}

func key(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

func keys(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, key(o))
	}
	slices.Sort(out)
	return out
}

// helmOnly says whether a label or annotation is one only Helm adds: the
// release's bookkeeping and tooling labels, and the keep policy.
func helmOnly(k string) bool {
	return strings.HasPrefix(k, "helm.sh/") || strings.HasPrefix(k, "meta.helm.sh/") ||
		slices.Contains([]string{"app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}, k)
}

// asConfig is o as config/ would render it: without what only Helm
// adds, and with every string's blank lines folded. kustomize's YAML
// library reads a folded scalar whose next line is more indented (the
// policies' CEL, written `>-`) with one line break too many; the
// expression is the same CEL either way.
func asConfig(o *unstructured.Unstructured) map[string]any {
	c := o.DeepCopy()
	labels := c.GetLabels()
	for k := range labels {
		if helmOnly(k) {
			delete(labels, k)
		}
	}
	annotations := c.GetAnnotations()
	for k := range annotations {
		if helmOnly(k) {
			delete(annotations, k)
		}
	}
	// nil removes the field, as config/ has none.
	c.SetLabels(nilIfEmpty(labels))
	c.SetAnnotations(nilIfEmpty(annotations))
	return foldBlankLines(c.Object).(map[string]any)
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func foldBlankLines(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = foldBlankLines(e)
		}
	case []any:
		for i, e := range v {
			v[i] = foldBlankLines(e)
		}
	case string:
		for strings.Contains(v, "\n\n") {
			v = strings.ReplaceAll(v, "\n\n", "\n")
		}
		return v
	}
	return v
}

// requireSameObjects fails unless want and got hold the same objects, each
// equal apart from what only Helm adds; a difference shows as a diff of
// the two objects' YAML.
func requireSameObjects(t *testing.T, want, got []*unstructured.Unstructured, hint string) {
	t.Helper()
	require.Equal(t, keys(want), keys(got), "the same objects (kind namespace/name)")
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range got {
		byKey[key(o)] = o
	}
	for _, w := range want {
		g := byKey[key(w)]
		wantYAML, err := yaml.Marshal(asConfig(w))
		require.NoError(t, err)
		gotYAML, err := yaml.Marshal(asConfig(g))
		require.NoError(t, err)
		assert.Equal(t, string(wantYAML), string(gotYAML), "%s differs (- config/, + chart): %s", key(w), hint)
	}
}

// typed decodes every object of a kind client-go or apiextensions knows
// strictly into its Go type: an unknown or duplicated field fails. The
// others (cert-manager's, the Prometheus Operator's) are compared with
// config/'s renderings instead.
func typed(t *testing.T, objs []*unstructured.Unstructured) []runtime.Object {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []runtime.Object
	for _, o := range objs {
		if !scheme.Recognizes(o.GroupVersionKind()) {
			continue
		}
		data, err := json.Marshal(o.Object)
		require.NoError(t, err)
		obj, _, err := dec.Decode(data, nil, nil)
		require.NoError(t, err, "%s decodes strictly", key(o))
		out = append(out, obj)
	}
	return out
}

// all returns the objects of type T.
func all[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// only returns the one object of type T.
func only[T runtime.Object](t *testing.T, objs []runtime.Object) T {
	t.Helper()
	found := all[T](objs)
	require.Len(t, found, 1, "one %T", *new(T))
	return found[0]
}
