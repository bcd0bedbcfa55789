package controlplane_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

func TestStartAndStopLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	began := time.Now()
	cp, err := controlplane.Start(context.Background(), controlplane.Options{})
	require.NoError(t, err)
	t.Logf("warm start took %s", time.Since(began).Round(time.Millisecond))

	v, err := cp.Clientset().Discovery().ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, "v1.37.2", v.GitVersion)
	_, err = os.Stat(cp.KubeconfigPath)
	require.NoError(t, err, "kubeconfig written")

	pids := cp.Pids()
	require.Len(t, pids, 2)
	dir := cp.Dir
	require.NoError(t, cp.Stop())
	require.NoError(t, cp.Stop(), "Stop is idempotent")

	for name, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "%s (pid %d) still exists", name, pid)
	}
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "state folder %s removed", dir)
}

func TestTwoInstancesRunSideBySide(t *testing.T) {
	t.Parallel()
	var cps [2]*controlplane.ControlPlane
	var errs [2]error
	var wg sync.WaitGroup
	for i := range cps {
		wg.Go(func() {
			cps[i], errs[i] = controlplane.Start(context.Background(), controlplane.Options{})
		})
	}
	wg.Wait()
	for i, cp := range cps {
		if cp != nil {
			t.Cleanup(func() { assert.NoError(t, cp.Stop()) })
		}
		require.NoError(t, errs[i])
	}
	require.NotEqual(t, cps[0].Config.Host, cps[1].Config.Host)

	ctx := context.Background()
	require.NoError(t, cps[0].EnsureNamespace(ctx, "only-in-first"))
	_, err := cps[1].Clientset().CoreV1().Namespaces().Get(ctx, "only-in-first", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "instances share no state: %v", err)
}

func TestEtcdDataFromStartsWithTheStoppedInstancesObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first, err := controlplane.Start(ctx, controlplane.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, first.EnsureNamespace(ctx, "kept"))
	stored, err := first.Clientset().CoreV1().ConfigMaps("kept").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "seed"},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, first.Stop())

	for range 2 { // the source folder serves again: a copy is what changed
		cp, err := controlplane.Start(ctx, controlplane.Options{EtcdDataFrom: first.EtcdDataDir()})
		require.NoError(t, err)
		got, err := cp.Clientset().CoreV1().ConfigMaps("kept").Get(ctx, "seed", metav1.GetOptions{})
		require.NoError(t, err, "the stopped instance's object is back")
		assert.Equal(t, stored.UID, got.UID)
		assert.Equal(t, map[string]string{"k": "v"}, got.Data)
		require.NoError(t, cp.Clientset().CoreV1().ConfigMaps("kept").Delete(ctx, "seed", metav1.DeleteOptions{}))
		require.NoError(t, cp.Stop())
	}
}

func TestInstallCRDsWaitsUntilEstablished(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()

	names, err := cp.InstallCRDs(ctx, "testdata/crd", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"widgets.harness.example.com"}, names)

	// Established means usable at once, without polling.
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "harness.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": int64(3)},
	}}
	gvr := schema.GroupVersionResource{Group: "harness.example.com", Version: "v1", Resource: "widgets"}
	_, err = dyn.Resource(gvr).Namespace("default").Create(ctx, widget, metav1.CreateOptions{})
	require.NoError(t, err)

	_, err = cp.InstallCRDs(ctx, "testdata/webhook", nil)
	assert.ErrorContains(t, err, "no CustomResourceDefinition")
}

// A webhook configuration written for a Service reaches an in-test HTTPS
// server: this proves the URL and CA bundle rewrite end to end.
func TestWebhookConfigurationReachesLocalServer(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()

	cert, err := cp.IssueServingCert(t.TempDir())
	require.NoError(t, err)
	tlsConfig, err := cert.TLSConfig()
	require.NoError(t, err)

	var mu sync.Mutex
	var seen []admissionv1.AdmissionRequest
	mux := http.NewServeMux()
	mux.HandleFunc("/validate-configmap", func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = append(seen, *review.Request)
		mu.Unlock()
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if strings.HasPrefix(review.Request.Name, "deny-") {
			resp.Allowed = false
			resp.Result = &metav1.Status{Message: "denied by the in-test webhook"}
		}
		review.Response, review.Request = resp, nil
		_ = json.NewEncoder(w).Encode(review)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux, TLSConfig: tlsConfig, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	configs, err := cp.InstallWebhooks(ctx, "testdata/webhook", controlplane.WebhookServer{Host: ln.Addr().String(), CABundle: cp.CACert()})
	require.NoError(t, err)
	require.Len(t, configs, 1)

	cs := cp.Clientset()
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "hooked", Labels: map[string]string{"harness-webhook": "on"},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The API server picks new webhook configurations up asynchronously.
	require.Eventually(t, func() bool {
		_, err := cs.CoreV1().ConfigMaps("hooked").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "deny-me"}}, metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), "denied by the in-test webhook")
	}, 20*time.Second, 100*time.Millisecond)

	_, err = cs.CoreV1().ConfigMaps("hooked").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allow-me"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	var allowSeen bool
	for _, req := range seen {
		assert.Equal(t, "hooked", req.Namespace)
		assert.Equal(t, "configmaps", req.Resource.Resource)
		assert.Equal(t, admissionv1.Create, req.Operation)
		allowSeen = allowSeen || req.Name == "allow-me"
	}
	assert.True(t, allowSeen, "the allowed create went through the webhook")
}

func TestControllerManagerGivesReplicaSetsPodsAndCascades(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{ControllerManager: true})
	ctx := context.Background()
	cs := cp.Clientset()

	labels := map[string]string{"app": "harness"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "harness", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	_, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return countPods(ctx, cs, "app=harness") == 2 }, 30*time.Second, 100*time.Millisecond)

	require.NoError(t, cs.AppsV1().ReplicaSets("default").Delete(ctx, "harness", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return countPods(ctx, cs, "app=harness") == 0 }, 30*time.Second, 100*time.Millisecond,
		"the garbage collector deletes the owned Pods")
}

func countPods(ctx context.Context, cs kubernetes.Interface, selector string) int {
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return -1
	}
	return len(pods.Items)
}

func TestServiceAccountClientIsAuthorizedByRBACAndAudited(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{AuditPolicy: controlplane.DefaultAuditPolicy})
	ctx := context.Background()

	saConfig, err := cp.ServiceAccountConfig(ctx, "team", "reader")
	require.NoError(t, err)
	sa, err := kubernetes.NewForConfig(saConfig)
	require.NoError(t, err)
	_, err = sa.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "no role yet: %v", err)

	admin := cp.Clientset()
	_, err = admin.RbacV1().Roles("team").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "team"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := sa.CoreV1().ConfigMaps("team").List(ctx, metav1.ListOptions{})
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)

	imp, err := kubernetes.NewForConfig(cp.ImpersonatedConfig("jane", "developers"))
	require.NoError(t, err)
	_, err = imp.CoreV1().Secrets("team").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "impersonated user has no rights: %v", err)

	require.Eventually(t, func() bool {
		events, err := cp.AuditEvents()
		if err != nil {
			return false
		}
		for _, e := range events {
			if e.User.Username == "system:serviceaccount:team:reader" && e.Verb == "list" &&
				e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && e.ResponseStatus != nil && e.ResponseStatus.Code == 200 {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "the audit log shows the service account's list")
}

func TestMissingBinarySaysMakeTools(t *testing.T) {
	t.Setenv(controlplane.AssetsEnv, t.TempDir())
	_, err := controlplane.Start(context.Background(), controlplane.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make tools")
	assert.Contains(t, err.Error(), "etcd not found")
}

func TestRelativeAssetsFolderIsReadFromTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "etcd"), []byte("#!/bin/sh\n"), 0o755))
	t.Chdir(dir)
	t.Setenv(controlplane.AssetsEnv, "bin")

	path, err := controlplane.Binary("etcd")
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(filepath.Join(dir, "bin", "etcd"))
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	assert.True(t, filepath.IsAbs(path), "%s: a binary runs in its own working folder", path)
	assert.Equal(t, want, got)
}

func TestManifestsReadsPlainFoldersAndRejectsJunk(t *testing.T) {
	t.Parallel()
	objs, err := controlplane.Manifests("testdata/webhook")
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "ValidatingWebhookConfiguration", objs[0].GetKind())

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("just: a map\n"), 0o600))
	_, err = controlplane.Manifests(dir)
	assert.ErrorContains(t, err, "without apiVersion or kind")

	_, err = controlplane.Manifests(filepath.Join(dir, "missing"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}
