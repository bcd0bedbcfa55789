package e2e_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
	_, err = admin.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(ns, "web"), metav1.CreateOptions{})
	require.NoError(t, err)

	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	operator, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	operatorDyn, err := dynamic.NewForConfig(saCfg)
	require.NoError(t, err)
	dryRun := []string{metav1.DryRunAll}

	// The Pod the ChaosPod's template makes, as the operator builds it.
	template := chaos.Object["spec"].(map[string]any)["template"].(map[string]any)
	podFor := func(name string) *corev1.Pod {
		var tmpl corev1.PodTemplateSpec
		u := &unstructured.Unstructured{Object: template}
		require.NoError(t, runtimeFromUnstructured(u, &tmpl))
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: ns, Labels: tmpl.Labels,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind, Name: chaos.GetName(), UID: chaos.GetUID(),
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Spec: tmpl.Spec,
		}
	}
	otherImage := func() error {
		p := podFor("victim")
		p.Spec.Containers[0].Image = "evil:latest"
		_, err := operator.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
		return err
	}
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
		{"create a ChaosPod's Pod from its template", func() error {
			_, err := operator.CoreV1().Pods(ns).Create(ctx, podFor("victim"), metav1.CreateOptions{DryRun: dryRun})
			return err
		}, ""},
		{"create a privileged Pod for the ChaosPod", func() error {
			p := podFor("victim")
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			_, err := operator.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, chaosPodPolicy},
		{"create a Pod with another image for the ChaosPod", otherImage, templatePolicy},
		{"create a Pod for the ChaosPod with another UID", func() error {
			p := podFor("victim")
			p.OwnerReferences[0].UID = "not-the-chaospods"
			_, err := operator.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, templatePolicy},
		{"create a Pod without a ChaosPod owner", func() error {
			p := podFor("stray")
			p.OwnerReferences = nil
			_, err := operator.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, chaosPodPolicy},
		{"create a privileged Pod in kube-system", func() error {
			p := podFor("victim")
			p.Namespace = metav1.NamespaceSystem
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			_, err := operator.CoreV1().Pods(metav1.NamespaceSystem).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
			return err
		}, chaosPodPolicy},
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
	// The API server resolves a policy's paramKind when it loads the
	// policy; until it has seen the CRD the policy fails closed.
	// Meanwhile it fails open, so that nobody else's Pods are refused.
	start := time.Now()
	_, err = admin.CoreV1().Pods(ns).Create(ctx, podFor("someone-elses"), metav1.CreateOptions{DryRun: dryRun})
	require.NoError(t, err, "the policies refuse no Pod of anyone else, even before they know ChaosPods")
	require.Eventually(t, func() bool { return otherImage() != nil }, 90*time.Second, 200*time.Millisecond, "the template policy knows ChaosPods")
	t.Logf("figure: the template policy enforces %s after its CRD was established (open until then)", time.Since(start).Round(100*time.Millisecond))
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

func runtimeFromUnstructured(u *unstructured.Unstructured, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out)
}
