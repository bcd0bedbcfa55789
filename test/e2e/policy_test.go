package e2e_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

const (
	confinementPolicy = "hexagonal-operator-self-confinement"
	chaosPodPolicy    = "hexagonal-operator-chaospod-pods"
	templatePolicy    = "hexagonal-operator-chaospod-templates"
)

// The admission policies of config/policy, deployed by config/default,
// deny the operator's own token every write outside its job, naming the
// policy, and allow the writes its job is made of. (The operator's whole
// scenario under the policies is TestRBACIsExactlyWhatTheOperatorUses.)
func TestOperatorIsConfinedByItsPolicy(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	admin := cp.Clientset()
	require.NoError(t, cp.Apply(ctx, rbacOf(t)...))
	_, err := cp.InstallCRDs(ctx, repoPath(t, "config", "crd"), nil)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	// A ChaosPod, created before the webhooks, which nothing here answers
	// (they are installed for the cases that need them, after the Pods).
	const ns = "apps"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	chaos, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Create(ctx, chaosPodV1("victim"), metav1.CreateOptions{})
	require.NoError(t, err)
	rs := replicaSet(ns, "web")
	rs.Labels["pod-template-hash"] = "5d8f7c"
	_, err = admin.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
	// Pods to delete: the ChaosPod's (made by the admin here), one of the
	// ReplicaSet's and one of nobody's in kube-system.
	pod := func(namespace, name string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		_, err := admin.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
		return p
	}
	web, err := admin.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	pod(ns, "victim", &metav1.OwnerReference{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind, Name: "victim", UID: chaos.GetUID(), Controller: ptr.To(true)})
	pod(ns, "web-1", &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: web.UID, Controller: ptr.To(true)})
	pod(metav1.NamespaceSystem, "dns", nil)

	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	operatorDyn, err := dynamic.NewForConfig(saCfg)
	require.NoError(t, err)
	dryRun := []string{metav1.DryRunAll}

	mutating := func() *admissionregistrationv1.MutatingWebhookConfiguration {
		m, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "hexagonal-operator-mutating-webhook-configuration", metav1.GetOptions{})
		require.NoError(t, err)
		return m
	}
	crd := func() *unstructured.Unstructured {
		c, err := operatorDyn.Resource(crdResource).Get(ctx, "chaospods."+chaosv1.GroupName, metav1.GetOptions{})
		require.NoError(t, err)
		return c
	}
	deletePod := func(namespace, name string) func() error {
		return func() error {
			return operator.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{DryRun: dryRun})
		}
	}
	// patchRS, patchChaosPod and patchStatus merge-patch as the operator.
	patchRS := func(patch string) func() error {
		return func() error {
			_, err := operator.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: dryRun})
			return err
		}
	}
	updateChaosPod := func(change func(c *unstructured.Unstructured), subresources ...string) func() error {
		return func() error {
			c, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Get(ctx, "victim", metav1.GetOptions{}) // it lists, never gets
			require.NoError(t, err)
			change(c)
			_, err = operatorDyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).Update(ctx, c, metav1.UpdateOptions{DryRun: dryRun}, subresources...)
			return err
		}
	}
	set := func(value any, path ...string) func(c *unstructured.Unstructured) {
		return func(c *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(c.Object, value, path...))
		}
	}
	setContainer := func(field string, value any) func(c *unstructured.Unstructured) {
		return func(c *unstructured.Unstructured) {
			containers, _, err := unstructured.NestedSlice(c.Object, "spec", "template", "spec", "containers")
			require.NoError(t, err)
			containers[0].(map[string]any)[field] = value
			require.NoError(t, unstructured.SetNestedSlice(c.Object, containers, "spec", "template", "spec", "containers"))
		}
	}
	updateMutating := func(change func(m *admissionregistrationv1.MutatingWebhookConfiguration)) func() error {
		return func() error {
			m := mutating()
			change(m)
			_, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}
	}
	updateCRD := func(change func(c *unstructured.Unstructured)) func() error {
		return func() error {
			c := crd()
			change(c)
			_, err := operatorDyn.Resource(crdResource).Update(ctx, c, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}
	}
	updateSecret := func(change func(s *corev1.Secret)) func() error {
		return func() error {
			s, err := operator.CoreV1().Secrets(operatorNamespace).Get(ctx, "hexagonal-operator-webhook-cert", metav1.GetOptions{})
			require.NoError(t, err)
			change(s)
			_, err = operator.CoreV1().Secrets(operatorNamespace).Update(ctx, s, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}
	}
	// condition is a status condition as the CRD's schema takes it.
	condition := func(typ, reason string) any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": "m", "lastTransitionTime": "2026-12-05T00:00:00Z"}
	}
	ownedByTheNamespace := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns, UID: "any"}}
	tlsSecret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNamespace}, Type: corev1.SecretTypeTLS, Data: data}
	}
	certData := map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k"), "ca.crt": []byte("c"), "ca.key": []byte("k")}

	tests := []struct {
		name   string
		write  func() error
		policy string // "" when the write is the operator's job and allowed
	}{
		{"label a ReplicaSet", func() error {
			_, err := operator.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"hello":"world"}}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}, ""},
		{"patch a ReplicaSet's Pod template", func() error {
			_, err := operator.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"hostNetwork":true}}}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"annotate a ReplicaSet", func() error {
			_, err := operator.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"change the ReplicaSet's hello label", patchRS(`{"metadata":{"labels":{"hello":"again"}}}`), ""},
		{"drop a ReplicaSet's pod-template-hash label", patchRS(`{"metadata":{"labels":{"pod-template-hash":null}}}`), confinementPolicy},
		{"change a ReplicaSet's label", patchRS(`{"metadata":{"labels":{"team":"other"}}}`), confinementPolicy},
		{"add a ReplicaSet label", patchRS(`{"metadata":{"labels":{"extra":"x"}}}`), confinementPolicy},
		{"give a ReplicaSet an owner", patchRS(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"apps","uid":"any"}]}}`), confinementPolicy},
		{"give a ReplicaSet a finalizer", patchRS(`{"metadata":{"finalizers":["e2e.example/hold"]}}`), confinementPolicy},
		{"move a ChaosPod's stop", updateChaosPod(set("2030-01-01T00:00:00Z", "spec", "nextStop")), ""},
		{"record a ChaosPod's run", updateChaosPod(set("2026-12-05T00:00:00Z", "status", "lastRun"), "status"), ""},
		{"record a ChaosPod's Ready condition", updateChaosPod(set([]any{condition("Ready", "PodRunning")}, "status", "conditions"), "status"), ""},
		{"record a ChaosPod's Ready condition for a crash-looping Pod", updateChaosPod(set([]any{condition("Ready", "PodCrashLooping")}, "status", "conditions"), "status"), ""},
		{"record a ChaosPod's Ready condition with another reason", updateChaosPod(set([]any{condition("Ready", "Compromised")}, "status", "conditions"), "status"), confinementPolicy},
		{"record another condition of a ChaosPod", updateChaosPod(set([]any{condition("Ready", "PodRunning"), condition("Hijacked", "PodRunning")}, "status", "conditions"), "status"), confinementPolicy},
		{"change a ChaosPod's template", updateChaosPod(set([]any{map[string]any{"name": "pause", "image": "evil:latest"}}, "spec", "template", "spec", "containers")), confinementPolicy},
		{"write a ChaosPod's template back as Go serializes it", updateChaosPod(setContainer("resources", map[string]any{})), ""},
		{"give a ChaosPod's container resources", updateChaosPod(setContainer("resources", map[string]any{"limits": map[string]any{"cpu": "8"}})), confinementPolicy},
		{"change a ChaosPod's template ServiceAccount", updateChaosPod(set("powerful", "spec", "template", "spec", "serviceAccountName")), confinementPolicy},
		{"relabel a ChaosPod's template", updateChaosPod(set("x", "spec", "template", "metadata", "labels", "app")), confinementPolicy},
		{"add a container to a ChaosPod's template", updateChaosPod(set([]any{
			map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"}, map[string]any{"name": "side", "image": "evil:latest"},
		}, "spec", "template", "spec", "containers")), confinementPolicy},
		{"label a ChaosPod", updateChaosPod(set("y", "metadata", "labels", "x")), confinementPolicy},
		{"change a ChaosPod's stop interval", updateChaosPod(set("24h", "metadata", "annotations", chaosv1.StopIntervalAnnotation)), confinementPolicy},
		{"give a ChaosPod an owner", updateChaosPod(func(c *unstructured.Unstructured) { c.SetOwnerReferences(ownedByTheNamespace) }), confinementPolicy},
		{"give a ChaosPod a finalizer", updateChaosPod(func(c *unstructured.Unstructured) { c.SetFinalizers([]string{"e2e.example/hold"}) }), confinementPolicy},
		{"delete a ChaosPod's Pod", deletePod(ns, "victim"), ""},
		{"delete a ReplicaSet's Pod", deletePod(ns, "web-1"), chaosPodPolicy},
		{"delete a Pod in kube-system", deletePod(metav1.NamespaceSystem, "dns"), chaosPodPolicy},
		{"install the webhooks (as the admin)", func() error {
			_, err := cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), controlplane.WebhookServer{Host: "127.0.0.1:1", CABundle: cp.CACert()})
			return err
		}, ""},
		{"write a webhook configuration's CA bundle", func() error {
			m := mutating()
			for i := range m.Webhooks {
				m.Webhooks[i].ClientConfig.CABundle = []byte("new bundle")
			}
			_, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, ""},
		{"change a webhook's rules", func() error {
			m := mutating()
			m.Webhooks[0].Rules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
			_, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"change a webhook's URL", func() error {
			m := mutating()
			m.Webhooks[0].ClientConfig.URL = ptr.To("https://attacker.example/mutate")
			_, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"widen a webhook's namespace selector", func() error {
			m := mutating()
			m.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{}
			_, err := operator.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"give a webhook configuration an owner", updateMutating(func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
			m.OwnerReferences = ownedByTheNamespace
		}), confinementPolicy},
		{"give a webhook configuration a finalizer", updateMutating(func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
			m.Finalizers = []string{"e2e.example/hold"}
		}), confinementPolicy},
		{"give the CRD an owner", updateCRD(func(c *unstructured.Unstructured) {
			c.SetOwnerReferences(ownedByTheNamespace)
		}), confinementPolicy},
		{"give the CRD a finalizer", updateCRD(func(c *unstructured.Unstructured) {
			c.SetFinalizers(append(c.GetFinalizers(), "e2e.example/hold"))
		}), confinementPolicy},
		{"write the CRD's conversion CA bundle", func() error {
			c := crd()
			require.NoError(t, unstructured.SetNestedField(c.Object, base64.StdEncoding.EncodeToString(cp.CACert()), "spec", "conversion", "webhook", "clientConfig", "caBundle"))
			_, err := operatorDyn.Resource(crdResource).Update(ctx, c, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, ""},
		{"change the CRD's schema", func() error {
			c := crd()
			versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
			v := versions[0].(map[string]any)
			require.NoError(t, unstructured.SetNestedField(v, map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "schema", "openAPIV3Schema"))
			require.NoError(t, unstructured.SetNestedSlice(c.Object, versions, "spec", "versions"))
			_, err := operatorDyn.Resource(crdResource).Update(ctx, c, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its certificate Secret", func() error {
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, tlsSecret("hexagonal-operator-webhook-cert", certData), metav1.CreateOptions{DryRun: dryRun})
			return err
		}, ""},
		{"create its Secret labeled as self mode does", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.Labels = map[string]string{"app.kubernetes.io/managed-by": "hexagonal-operator"}
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, ""},
		{"create its Secret with a 64 KiB annotation", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.Annotations = map[string]string{"x": strings.Repeat("x", 64<<10)}
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its Secret with another label", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.Labels = map[string]string{"team": "other"}
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its Secret immutable", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.Immutable = ptr.To(true)
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its Secret with an owner", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.OwnerReferences = ownedByTheNamespace
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its Secret with a finalizer", func() error {
			s := tlsSecret("hexagonal-operator-webhook-cert", certData)
			s.Finalizers = []string{"e2e.example/hold"}
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, s, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"create its Secret (as the admin)", func() error {
			_, err := admin.CoreV1().Secrets(operatorNamespace).Create(ctx, tlsSecret("hexagonal-operator-webhook-cert", certData), metav1.CreateOptions{})
			return err
		}, ""},
		{"rotate its Secret's certificate", updateSecret(func(s *corev1.Secret) { s.Data["tls.crt"] = []byte("new") }), ""},
		{"give its Secret an owner", updateSecret(func(s *corev1.Secret) { s.OwnerReferences = ownedByTheNamespace }), confinementPolicy},
		{"give its Secret a finalizer", updateSecret(func(s *corev1.Secret) { s.Finalizers = []string{"e2e.example/hold"} }), confinementPolicy},
		{"create another Secret", func() error {
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, tlsSecret("stolen", certData), metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
		{"put other data in its Secret", func() error {
			data := map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k"), "token": []byte("t")}
			_, err := operator.CoreV1().Secrets(operatorNamespace).Create(ctx, tlsSecret("hexagonal-operator-webhook-cert", data), metav1.CreateOptions{DryRun: dryRun})
			return err
		}, confinementPolicy},
	}
	for _, tt := range tests { // in order: the webhooks come after the Pods, several cases share objects
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write()
			if tt.policy == "" {
				require.NoError(t, err, "the operator's job")
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "%v", err)
			assert.Contains(t, err.Error(), "ValidatingAdmissionPolicy '"+tt.policy+"'", "the denial names the policy")
			t.Logf("denied: %v", err)
		})
	}

	// The same writes by someone else are not the policies' business.
	_, err = admin.AppsV1().ReplicaSets(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{DryRun: dryRun})
	require.NoError(t, err, "the policies apply to the operator only")
}
