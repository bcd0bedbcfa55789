package webhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
)

// configDir is config/webhook, seen from this package's folder.
var configDir = filepath.Join("..", "..", "..", "config", "webhook")

// Base names in config/webhook; config/default prefixes them.
var baseService = webhook.ServiceRef{Namespace: "system", Name: "webhook-service"}

// readObjects decodes every document of a YAML file into the typed object
// matching its kind, refusing fields the type does not have (a typo in a
// manifest is a failure, not a silently ignored line).
func readObjects(t *testing.T, path string) []any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []any
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			require.NoError(t, err, path)
		}
		var head struct{ Kind string }
		require.NoError(t, json.Unmarshal(doc, &head))
		var obj any
		switch head.Kind {
		case "MutatingWebhookConfiguration":
			obj = &admissionregistrationv1.MutatingWebhookConfiguration{}
		case "ValidatingWebhookConfiguration":
			obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
		case "Service":
			obj = &corev1.Service{}
		default:
			t.Fatalf("%s: unexpected kind %q", path, head.Kind)
		}
		strict := json.NewDecoder(bytes.NewReader(doc))
		strict.DisallowUnknownFields()
		require.NoError(t, strict.Decode(obj), path)
		out = append(out, obj)
	}
}

func TestManifestsMatchTheRegistrationTable(t *testing.T) {
	t.Parallel()
	hooks := append(append(podHooks(), chaosPodHooks()...), operatorPodHooks()...)
	objs := readObjects(t, filepath.Join(configDir, "manifests.yaml"))
	require.Len(t, objs, 2, "one Mutating- and one ValidatingWebhookConfiguration")

	wantMutating := webhook.MutatingWebhookConfiguration("mutating-webhook-configuration", baseService, hooks)
	wantValidating := webhook.ValidatingWebhookConfiguration("validating-webhook-configuration", baseService, hooks)
	assert.Equal(t, wantMutating, objs[0], "config/webhook/manifests.yaml differs from the registration table (mutating)")
	assert.Equal(t, wantValidating, objs[1], "config/webhook/manifests.yaml differs from the registration table (validating)")
}

// The table itself holds what the README's Webhooks section promises of the
// Pod webhooks, whatever the YAML says.
func TestPodHooksFollowTheSpec(t *testing.T) {
	t.Parallel()
	hooks := podHooks()
	paths := map[string]webhook.HookType{}
	for _, h := range hooks {
		paths[h.Path] = h.Type
		assert.Equal(t, admissionregistrationv1.SideEffectClassNone, h.SideEffects, h.Path)
		assert.Equal(t, admissionregistrationv1.Fail, h.FailurePolicy, h.Path)
		assert.Equal(t, admissionregistrationv1.Equivalent, h.MatchPolicy, h.Path)
		assert.Equal(t, int32(10), h.TimeoutSeconds, h.Path)
		require.NotNil(t, h.NamespaceSelector, h.Path)
		require.Len(t, h.NamespaceSelector.MatchExpressions, 1)
		expr := h.NamespaceSelector.MatchExpressions[0]
		assert.Equal(t, "kubernetes.io/metadata.name", expr.Key)
		assert.EqualValues(t, "NotIn", expr.Operator)
		assert.ElementsMatch(t, []string{"kube-system", "kube-public", "kube-node-lease", "hexagonal-operator-system"}, expr.Values)
		assert.ElementsMatch(t, []admissionregistrationv1.OperationType{"CREATE", "UPDATE"}, h.Operations)
		assert.Equal(t, "pods", h.Resource.Resource.Resource)
	}
	assert.Equal(t, map[string]webhook.HookType{
		"/mutate--v1-pod":   webhook.MutatingHook,
		"/validate--v1-pod": webhook.ValidatingHook,
	}, paths)
	for _, cfg := range []any{
		webhook.MutatingWebhookConfiguration("m", baseService, hooks).Webhooks[0].AdmissionReviewVersions,
		webhook.ValidatingWebhookConfiguration("v", baseService, hooks).Webhooks[0].AdmissionReviewVersions,
	} {
		assert.Equal(t, []string{"v1"}, cfg)
	}
}

func TestServiceAndKustomization(t *testing.T) {
	t.Parallel()
	objs := readObjects(t, filepath.Join(configDir, "service.yaml"))
	require.Len(t, objs, 1)
	svc, ok := objs[0].(*corev1.Service)
	require.True(t, ok)
	assert.Equal(t, baseService.Name, svc.Name)
	assert.Equal(t, baseService.Namespace, svc.Namespace)
	require.Len(t, svc.Spec.Ports, 1)
	assert.Equal(t, int32(443), svc.Spec.Ports[0].Port, "clientConfig.service leaves the port out: 443")
	assert.Equal(t, intstr.FromInt32(webhook.DefaultPort), svc.Spec.Ports[0].TargetPort)
	assert.NotEmpty(t, svc.Spec.Selector)

	data, err := os.ReadFile(filepath.Join(configDir, "kustomization.yaml"))
	require.NoError(t, err)
	var k struct {
		Resources []string `json:"resources"`
	}
	require.NoError(t, utilyaml.Unmarshal(data, &k))
	assert.ElementsMatch(t, []string{"manifests.yaml", "service.yaml"}, k.Resources)
}
