package certs_test

import (
	"context"
	"encoding/base64"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/app"
)

// restoreWithin is how soon a wiped bundle must be back.
const restoreWithin = 2 * time.Second

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// fakeCRDClient holds a ChaosPod CRD whose conversion webhook has no
// bundle yet.
func fakeCRDClient() *dynamicfake.FakeDynamicClient {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": app.ChaosPodCRDName},
		"spec": map[string]any{"conversion": map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig":             map[string]any{"url": "https://127.0.0.1:9443/convert"},
			},
		}},
	}}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{crdGVR: "CustomResourceDefinitionList"}, crd)
}

func crdBundle(t testing.TB, dyn *dynamicfake.FakeDynamicClient) []byte {
	t.Helper()
	crd, err := dyn.Resource(crdGVR).Get(context.Background(), app.ChaosPodCRDName, metav1.GetOptions{})
	require.NoError(t, err)
	s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

func wipeMutating(t testing.TB, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, certs.DefaultMutatingWebhookConfiguration, metav1.GetOptions{})
	require.NoError(t, err)
	for i := range m.Webhooks {
		m.Webhooks[i].ClientConfig.CABundle = nil
	}
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func wipeCRD(t testing.TB, dyn *dynamicfake.FakeDynamicClient) {
	t.Helper()
	ctx := context.Background()
	crd, err := dyn.Resource(crdGVR).Get(ctx, app.ChaosPodCRDName, metav1.GetOptions{})
	require.NoError(t, err)
	unstructured.RemoveNestedField(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	_, err = dyn.Resource(crdGVR).Update(ctx, crd, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// startWatchingSelf starts a source whose refresh loop is an hour away, so
// only its watches (or polls) can restore a bundle in a test's time.
func startWatchingSelf(t *testing.T, cs *fake.Clientset, dyn *dynamicfake.FakeDynamicClient, log *zap.Logger) *certs.SelfIssued {
	t.Helper()
	src, err := certs.NewSelfIssued(selfOptions(), cs, log,
		certs.CRDConversionTarget(dyn, app.ChaosPodCRDName))
	require.NoError(t, err)
	require.NoError(t, src.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, src.Stop(context.Background())) })
	return src
}

func TestWipedCABundleIsRestoredThroughTheWatch(t *testing.T) {
	t.Parallel()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	dyn := fakeCRDClient()
	src := startWatchingSelf(t, cs, dyn, zap.NewNop())
	bundle := src.CABundle()
	require.Equal(t, bundle, crdBundle(t, dyn), "start writes the CRD's bundle")
	require.Eventually(t, func() bool { return src.WatchedTargets() == 3 }, 5*time.Second, 10*time.Millisecond)

	for range 3 { // again and again: each wipe is a new event
		wipeMutating(t, cs)
		wipeCRD(t, dyn)
		assert.Eventually(t, func() bool {
			for _, b := range bundles(t, cs) {
				if string(b) != string(bundle) {
					return false
				}
			}
			return string(crdBundle(t, dyn)) == string(bundle)
		}, restoreWithin, 10*time.Millisecond, "both bundles restored")
	}

	t.Run("a webhook configuration created later gets the bundle at once", func(t *testing.T) {
		ctx := context.Background()
		require.NoError(t, cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, certs.DefaultValidatingWebhookConfiguration, metav1.DeleteOptions{}))
		require.NoError(t, cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, certs.DefaultMutatingWebhookConfiguration, metav1.DeleteOptions{}))
		createWebhookConfigs(t, cs)
		assert.Eventually(t, func() bool {
			for _, b := range bundles(t, cs) {
				if string(b) != string(bundle) {
					return false
				}
			}
			return true
		}, restoreWithin, 10*time.Millisecond)
	})
}

// Without the watch verb the source reads its targets about every second
// instead, says so once per target, and still restores a wiped bundle in
// time.
func TestWipedCABundleIsRestoredWhenTheWatchIsForbidden(t *testing.T) {
	t.Parallel()
	cs := newFakeClientset()
	createWebhookConfigs(t, cs)
	var refused atomic.Int32
	cs.PrependWatchReactor("mutatingwebhookconfigurations", func(k8stesting.Action) (bool, watch.Interface, error) {
		refused.Add(1)
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, "", nil)
	})
	core, logs := observer.New(zapcore.InfoLevel)
	src := startWatchingSelf(t, cs, fakeCRDClient(), zap.New(core))
	bundle := src.CABundle()
	require.Eventually(t, func() bool { return src.WatchedTargets() == 2 }, 5*time.Second, 10*time.Millisecond, "the other targets are watched")

	for range 3 {
		wipeMutating(t, cs)
		assert.Eventually(t, func() bool {
			for _, b := range bundles(t, cs) {
				if string(b) != string(bundle) {
					return false
				}
			}
			return true
		}, restoreWithin, 10*time.Millisecond, "the polled bundle is restored")
	}
	cannot := logs.FilterMessage("cannot watch CA bundle target, polling it instead")
	assert.Equal(t, 1, cannot.Len(), "logged once")
	if cannot.Len() > 0 {
		assert.Equal(t, "MutatingWebhookConfiguration/"+certs.DefaultMutatingWebhookConfiguration, cannot.All()[0].ContextMap()["target"])
	}
	assert.Eventually(t, func() bool { return refused.Load() >= 2 }, 3*time.Second, 10*time.Millisecond, "the watch is tried again")
	require.NoError(t, src.Stop(context.Background()))
	assert.LessOrEqual(t, refused.Load(), int32(4), "with a back-off")
}
