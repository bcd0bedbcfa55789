package kubeclient_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
)

// seen is one request as the server got it.
type seen struct {
	method, path, query, accept, contentType, body string
}

// server answers every request with a ConfigMap (or a list of one, or a
// watch of one) in JSON, and records what it was asked.
func server(t *testing.T) (*rest.Config, func() seen) {
	t.Helper()
	var mu sync.Mutex
	var last seen
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "settings", ResourceVersion: "7"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept"), r.Header.Get("Content-Type"), string(body)}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") == "true":
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": cm})
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/apps/configmaps":
			_ = json.NewEncoder(w).Encode(corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, Items: []corev1.ConfigMap{cm}})
		case r.Method == http.MethodDelete:
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess})
		default:
			_ = json.NewEncoder(w).Encode(cm)
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, func() seen { mu.Lock(); defer mu.Unlock(); return last }
}

func TestTypedClientMakesTheRequestsOfClientGosGeneratedClients(t *testing.T) {
	t.Parallel()
	cfg, last := server(t)
	httpClient, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	cs, err := kubeclient.NewForConfigAndClient(cfg, httpClient)
	require.NoError(t, err)
	cms := cs.CoreV1().ConfigMaps("apps")
	ctx := t.Context()
	const base = "/api/v1/namespaces/apps/configmaps"

	got, err := cms.Get(ctx, "settings", metav1.GetOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Equal(t, "7", got.ResourceVersion)
	assert.Equal(t, seen{method: "GET", path: base + "/settings", query: "resourceVersion=0",
		accept: "application/vnd.kubernetes.protobuf,application/json"}, last(), "protobuf preferred when the config says nothing")

	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "labelSelector=app%3Dweb", last().query)

	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	ev := <-w.ResultChan()
	w.Stop()
	assert.Equal(t, watch.Added, ev.Type)
	assert.Equal(t, "settings", ev.Object.(*corev1.ConfigMap).Name)
	assert.Equal(t, "resourceVersion=7&watch=true", last().query)

	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{FieldManager: "me"})
	require.NoError(t, err)
	assert.Equal(t, "POST", last().method)
	assert.Equal(t, base, last().path)
	assert.Equal(t, "fieldManager=me", last().query)
	assert.Equal(t, "application/vnd.kubernetes.protobuf", last().contentType)

	_, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "PUT", last().method)
	assert.Equal(t, base+"/settings", last().path)

	_, err = cms.Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"a":"b"}}`), metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	assert.Equal(t, seen{method: "PATCH", path: base + "/settings/status", contentType: "application/merge-patch+json",
		accept: "application/vnd.kubernetes.protobuf,application/json", body: `{"data":{"a":"b"}}`}, last())

	require.NoError(t, cms.Delete(ctx, "settings", metav1.DeleteOptions{}))
	assert.Equal(t, "DELETE", last().method)
	assert.Equal(t, base+"/settings", last().path)
}

func TestTypedClientSpeaksTheConfiguredContentType(t *testing.T) {
	t.Parallel()
	cfg, last := server(t)
	cfg.ContentType = "application/json"
	httpClient, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	cs, err := kubeclient.NewForConfigAndClient(cfg, httpClient)
	require.NoError(t, err)

	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), "hooks", metav1.GetOptions{})
	require.NoError(t, err, "the server's ConfigMap decodes as JSON into the asked type")
	assert.Equal(t, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hooks", last().path, "cluster-scoped: no namespace")
	assert.Equal(t, "application/json, */*", last().accept)
}

func TestNewForConfigAndClientRequiresItsArguments(t *testing.T) {
	t.Parallel()
	_, err := kubeclient.NewForConfigAndClient(nil, http.DefaultClient)
	require.Error(t, err)
	_, err = kubeclient.NewForConfigAndClient(&rest.Config{}, nil)
	require.Error(t, err)
}
