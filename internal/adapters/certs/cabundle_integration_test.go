package certs_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/hexagonal-operator/operator/internal/adapters/certs"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

func repoPath(t testing.TB, rel string) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return filepath.Join(root, rel)
}

// A caBundle wiped in the mutating configuration or in the CRD's conversion
// webhook (a re-applied manifest does that) is back within 2 s: the
// source watches its targets, and its refresh is an hour away.
func TestSelfModeRestoresWipedCABundlesThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	require.NoError(t, cp.EnsureNamespace(ctx, app.OperatorNamespace))
	nowhere := controlplane.WebhookServer{Host: "127.0.0.1:9", CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(ctx, repoPath(t, "config/crd"), &nowhere)
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config/webhook"), nowhere)
	require.NoError(t, err)

	opts := certs.SelfOptions{
		Namespace:                      app.OperatorNamespace,
		MutatingWebhookConfiguration:   "mutating-webhook-configuration",
		ValidatingWebhookConfiguration: "validating-webhook-configuration",
		RefreshInterval:                time.Hour,
	}
	src, err := certs.NewSelfIssued(opts, cs, zaptest.NewLogger(t), certs.CRDConversionTarget(dyn, app.ChaosPodCRDName))
	require.NoError(t, err)
	require.NoError(t, src.Start(ctx))
	t.Cleanup(func() { require.NoError(t, src.Stop(ctx)) })
	bundle := src.CABundle()
	// With the API server a watch opens with the object's state, so this
	// wait is not needed for correctness; it keeps the figures to the watch.
	require.Eventually(t, func() bool { return src.WatchedTargets() == 3 }, 10*time.Second, 10*time.Millisecond)

	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	mutating := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	byName := func(name, rv string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv}
	}
	type target struct {
		// wipe removes the bundle and returns the resourceVersion it wrote.
		wipe  func() (string, error)
		watch func(rv string) (watch.Interface, error)
		holds func(runtime.Object) bool
	}
	targets := map[string]target{
		"MutatingWebhookConfiguration": {
			wipe: func() (string, error) {
				m, err := mutating.Get(ctx, opts.MutatingWebhookConfiguration, metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				for i := range m.Webhooks {
					m.Webhooks[i].ClientConfig.CABundle = nil
				}
				m, err = mutating.Update(ctx, m, metav1.UpdateOptions{})
				if err != nil {
					return "", err
				}
				return m.ResourceVersion, nil
			},
			watch: func(rv string) (watch.Interface, error) {
				return mutating.Watch(ctx, byName(opts.MutatingWebhookConfiguration, rv))
			},
			holds: func(obj runtime.Object) bool {
				m := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
				return !slices.ContainsFunc(m.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool {
					return !bytes.Equal(w.ClientConfig.CABundle, bundle)
				})
			},
		},
		"CustomResourceDefinition": {
			wipe: func() (string, error) {
				crd, err := crds.Get(ctx, app.ChaosPodCRDName, metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				unstructured.RemoveNestedField(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
				crd, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
				if err != nil {
					return "", err
				}
				return crd.GetResourceVersion(), nil
			},
			watch: func(rv string) (watch.Interface, error) {
				return crds.Watch(ctx, byName(app.ChaosPodCRDName, rv))
			},
			holds: func(obj runtime.Object) bool {
				crd := obj.(*unstructured.Unstructured)
				s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
				have, err := base64.StdEncoding.DecodeString(s)
				return err == nil && bytes.Equal(have, bundle)
			},
		},
	}
	for round := range 3 {
		for kind, tg := range targets {
			var rv string
			require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() (err error) {
				rv, err = tg.wipe()
				return err
			}), kind)
			wiped := time.Now()
			// Every change after the wipe, seen as it happens.
			w, err := tg.watch(rv)
			require.NoError(t, err, kind)
			// The refresh is an hour away here, so only the watch can
			// restore the bundle within this bound; how fast it does is a
			// figure (docs/reliability.md), not an assertion, since an
			// update of the CRD alone takes the API server a second or two
			// under load.
			restored := false
			timeout := time.After(10 * time.Second)
			for !restored {
				select {
				case ev, ok := <-w.ResultChan():
					require.True(t, ok, "%s: watch ended", kind)
					restored = ev.Type == watch.Modified && tg.holds(ev.Object)
				case <-timeout:
					require.FailNow(t, "bundle not restored", kind)
				}
			}
			took := time.Since(wiped)
			w.Stop()
			t.Logf("figure: caBundle restored in %s (%s, round %d)", took.Round(time.Millisecond), kind, round+1)
		}
	}
}
