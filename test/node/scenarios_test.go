package node_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
	"github.com/hexagonal-operator/operator/test/node"
)

const (
	probeRef       = "docker.io/library/node-tier-probe:test"
	metricsService = "hexagonal-operator-controller-manager-metrics-service"
	webhookService = "hexagonal-operator-webhook-service"
	certSecret     = "hexagonal-operator-webhook-cert"
)

// metricsThroughService: a Pod whose ServiceAccount is bound to
// metrics-reader reads /metrics through the metrics Service (200); one
// without the binding is forbidden (403); one without a token is
// unauthenticated (401).
func metricsThroughService(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface) {
	err := c.ImportImage(ctx, "probe", func(ctx context.Context) (node.Image, error) {
		bin, err := c.GoBuild(ctx, "./test/node/probe", "probe")
		if err != nil {
			return node.Image{}, err
		}
		base, err := node.StaticBaseLayer("/etc/ssl/certs/ca-certificates.crt", "")
		if err != nil {
			return node.Image{}, err
		}
		layer, err := node.BinaryLayer(bin, "probe")
		if err != nil {
			return node.Image{}, err
		}
		return node.Image{Ref: probeRef, Layers: [][]node.File{base, layer},
			Config: node.ImageConfig{Entrypoint: []string{"/probe"}, User: "65532:65532"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(opNamespace).Get(ctx, metricsService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://%s/metrics", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port))))
	for _, sa := range []string{"scraper", "stranger"} {
		if _, err := cs.CoreV1().ServiceAccounts(userNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "node-tier-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hexagonal-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: userNS, Name: "scraper"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	}()

	began := time.Now()
	cases := []struct {
		pod, sa string
		token   bool
		want    string
	}{
		{"scrape-bound", "scraper", true, "status=200"},
		{"scrape-unbound", "stranger", true, "status=403"},
		{"scrape-anonymous", "stranger", false, "status=401"},
	}
	for _, tc := range cases {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: tc.pod, Namespace: userNS},
			Spec: corev1.PodSpec{
				ServiceAccountName:           tc.sa,
				AutomountServiceAccountToken: ptr.To(tc.token),
				RestartPolicy:                corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "probe", Image: probeRef, ImagePullPolicy: corev1.PullIfNotPresent,
					Args: []string{"--url=" + url},
					SecurityContext: &corev1.SecurityContext{
						RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
			},
		}
		if _, err := cs.CoreV1().Pods(userNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, tc := range cases {
		msg := ""
		if !eventually(ctx, 90*time.Second, 250*time.Millisecond, func() bool {
			p, err := cs.CoreV1().Pods(userNS).Get(ctx, tc.pod, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
				return false
			}
			msg = strings.TrimSpace(p.Status.ContainerStatuses[0].State.Terminated.Message)
			return true
		}) {
			t.Fatalf("probe Pod %s did not finish%s", tc.pod, podSummary(ctx, cs, userNS))
		}
		if !strings.HasPrefix(msg, tc.want+" ") {
			t.Errorf("%s (ServiceAccount %s, token %v): %s, want %s", tc.pod, tc.sa, tc.token, msg, tc.want)
		}
		got = append(got, tc.pod+": "+msg)
		_ = cs.CoreV1().Pods(userNS).Delete(ctx, tc.pod, metav1.DeleteOptions{})
	}
	t.Logf("figure: /metrics through Service %s from Pods: %s (%s for the three)", url, strings.Join(got, "; "), time.Since(began).Round(100*time.Millisecond))
}

// selfModeCertificates: in self mode the operator's own CA (in its Secret)
// is what the webhook configurations and the CRD's conversion webhook
// trust, the webhook Service serves a certificate that CA signs for the
// Service's name, and the API server converts through /convert.
func selfModeCertificates(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, dyn dynamic.Interface) {
	sec, err := cs.CoreV1().Secrets(opNamespace).Get(ctx, certSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := sec.Data["ca.crt"]
	if len(ca) == 0 || bytes.Equal(ca, c.CP.CACert()) {
		t.Fatalf("Secret %s: ca.crt empty or the cluster's CA", certSecret)
	}
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "hexagonal-operator-mutating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vwc, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "hexagonal-operator-validating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range mwc.Webhooks {
		n++
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Name != webhookService || !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("mutating webhook %s: not the Service %s with the operator's CA", w.Name, webhookService)
		}
	}
	for _, w := range vwc.Webhooks {
		n++
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Name != webhookService || !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("validating webhook %s: not the Service %s with the operator's CA", w.Name, webhookService)
		}
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := dyn.Resource(crdGVR).Get(ctx, "chaospods.chaosapps.metamagical.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	encoded, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	if decoded, err := base64.StdEncoding.DecodeString(encoded); err != nil || !bytes.Equal(decoded, ca) {
		t.Errorf("CRD conversion webhook: caBundle is not the operator's CA")
	}

	// The Service's certificate, checked against the operator's CA from
	// the host (kube-proxy routes the Service's address here too).
	svc, err := cs.CoreV1().Services(opNamespace).Get(ctx, webhookService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	serverName := webhookService + "." + opNamespace + ".svc"
	began := time.Now()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", net.JoinHostPort(svc.Spec.ClusterIP, "443"),
		&tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS to the webhook Service %s as %s with the operator's CA: %v", svc.Spec.ClusterIP, serverName, err)
	}
	handshake := time.Since(began)
	_ = conn.Close()

	// A v2 object, stored at v1, read back at both versions: each crossing
	// goes through /convert behind the Service.
	v2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "chaosapps.metamagical.io/v2", "kind": "ChaosPod",
		"metadata": map[string]any{"name": "converted", "namespace": userNS},
		"spec": map[string]any{
			"podTemplate": map[string]any{"spec": map[string]any{
				"terminationGracePeriodSeconds": int64(1),
				"containers": []any{map[string]any{"name": "pause", "image": node.PauseImage,
					"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": int64(65535), "allowPrivilegeEscalation": false}}},
			}},
			"stop": map[string]any{"interval": "30s"},
		},
	}}
	began = time.Now()
	if _, err := dyn.Resource(chaosv2.GroupVersionResource).Namespace(userNS).Create(ctx, v2, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a v2 ChaosPod (converted to v1 for storage): %v", err)
	}
	asV1, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).Get(ctx, "converted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(asV1.Object, "spec", "template"); !found {
		t.Errorf("read at v1: no spec.template: %v", asV1.Object["spec"])
	}
	asV2, err := dyn.Resource(chaosv2.GroupVersionResource).Namespace(userNS).Get(ctx, "converted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if interval, _, _ := unstructured.NestedString(asV2.Object, "spec", "stop", "interval"); interval != "30s" {
		t.Errorf("read back at v2: spec.stop.interval %q, want 30s", interval)
	}
	conversions := time.Since(began)
	if err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).Delete(ctx, "converted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: self mode → %d webhooks and the CRD's conversion trust the operator's CA; TLS to %s verified with it in %s; v2 create + v1 and v2 reads through /convert in %s",
		n, serverName, handshake.Round(time.Millisecond), conversions.Round(time.Millisecond))
}

// leaseHolder returns the Lease's holder and its Pod's name.
func leaseHolder(ctx context.Context, cs kubernetes.Interface) (holder, pod string, lease time.Duration) {
	l, err := cs.CoordinationV1().Leases(opNamespace).Get(ctx, opLease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "", "", 0
	}
	holder = *l.Spec.HolderIdentity
	pod, _, _ = strings.Cut(holder, "_")
	if l.Spec.LeaseDurationSeconds != nil {
		lease = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return holder, pod, lease
}

// leaderPodDeleted: deleting the leader's Pod hands the Lease to the other
// replica, which then labels a new ReplicaSet.
func leaderPodDeleted(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	var old, oldPod string
	var lease time.Duration
	if !eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		old, oldPod, lease = leaseHolder(ctx, cs)
		return old != ""
	}) {
		t.Fatal("no leader")
	}
	began := time.Now()
	if err := cs.CoreV1().Pods(opNamespace).Delete(ctx, oldPod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var holder, pod string
	if !eventually(ctx, 2*time.Minute, 100*time.Millisecond, func() bool {
		holder, pod, _ = leaseHolder(ctx, cs)
		return holder != "" && holder != old && pod != oldPod
	}) {
		t.Fatalf("the Lease stayed with %q after its Pod was deleted", old)
	}
	takeover := time.Since(began)

	// A template change makes a new ReplicaSet; the new leader labels it.
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"node-tier/rev":"%d"}}}}}`, time.Now().UnixNano())
	if _, err := cs.AppsV1().Deployments(userNS).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	patched := time.Now()
	if !eventually(ctx, time.Minute, 100*time.Millisecond, func() bool {
		rss, err := cs.AppsV1().ReplicaSets(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(rss.Items) < 2 {
			return false
		}
		for _, rs := range rss.Items {
			if rs.Labels["hello"] != "world" {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the new leader did not label the new ReplicaSet within a minute")
	}
	labeled := time.Since(patched)
	t.Logf("figure: leader Pod %s deleted → %s leads after %s (lease %s + retry 2s is the bound without a release); new ReplicaSet labeled %s after the template change",
		oldPod, pod, takeover.Round(10*time.Millisecond), lease, labeled.Round(10*time.Millisecond))
	waitAvailable(ctx, t, cs, 2, 2*time.Minute)
}

// leaderKilled: the leader's process killed with SIGKILL cannot release its
// Lease; another identity (the other replica, or the restarted container
// under a new one) leads once the lease runs out.
func leaderKilled(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	var old, oldPod string
	var lease time.Duration
	if !eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		old, oldPod, lease = leaseHolder(ctx, cs)
		return old != ""
	}) {
		t.Fatal("no leader")
	}
	pod, err := cs.CoreV1().Pods(opNamespace).Get(ctx, oldPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := containerProcess(string(pod.UID), "/operator")
	if pid == 0 {
		t.Fatalf("no /operator process in a cgroup of Pod %s (%s)", oldPod, pod.UID)
	}
	began := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var holder, newPod string
	if !eventually(ctx, lease+time.Minute, 100*time.Millisecond, func() bool {
		holder, newPod, _ = leaseHolder(ctx, cs)
		return holder != "" && holder != old
	}) {
		t.Fatalf("the Lease stayed with %q after its process was killed", old)
	}
	takeover := time.Since(began)
	// The lease runs out at most its duration after the kill; a standby
	// tries every retry period stretched by up to the jitter factor.
	const retry = 2 * time.Second
	bound := lease + time.Duration(float64(retry)*(1+leaderelection.JitterFactor))
	t.Logf("figure: leader process in Pod %s killed (SIGKILL, no release) → %s leads after %s (bound: lease %s + retry %s × %.1f jitter = %s)",
		oldPod, newPod, takeover.Round(10*time.Millisecond), lease, retry, 1+leaderelection.JitterFactor, bound)
	if takeover > bound+time.Second {
		t.Errorf("takeover took %s, more than the bound %s (and a second's slack)", takeover, bound)
	}
	waitAvailable(ctx, t, cs, 2, 2*time.Minute)
}

// containerProcess finds the process of a container of the Pod podUID
// whose command line starts with cmd: the kubelet (cgroupfs driver) puts a
// Pod's containers under a cgroup named pod<uid>.
func containerProcess(podUID, cmd string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cgroup, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil || !strings.Contains(string(cgroup), "pod"+podUID) {
			continue
		}
		line, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(line), cmd+"\x00") {
			return pid
		}
	}
	return 0
}

// rolloutUnderPodCreation: `kubectl rollout restart` of the operator while a
// client creates Pods, which both Pod webhooks (failurePolicy Fail) admit:
// no admission may fail.
func rolloutUnderPodCreation(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface) {
	underPodCreation(ctx, t, c, cs, "rollout restart", func() error {
		_, err := c.Kubectl(ctx, "-n", opNamespace, "rollout", "restart", "deployment/"+opDeployment)
		return err
	})
}

// underPodCreation rolls the operator's Pods with roll (which changes the
// Deployment's template) while a client creates Pods, which both Pod
// webhooks (failurePolicy Fail) admit, and fails on any failed admission
// from before the rollout until the old Pods are gone.
func underPodCreation(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, what string, roll func() error) {
	var created, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10000; i++ { // about 10 minutes at this pace
			select {
			case <-stop:
				return
			default:
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", i), Namespace: userNS, Labels: map[string]string{"app": "load"}},
				Spec: corev1.PodSpec{
					// Admitted, never scheduled: the load is on admission.
					SchedulingGates: []corev1.PodSchedulingGate{{Name: "node-tier/hold"}},
					Containers:      []corev1.Container{pauseContainer()},
				},
			}
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := cs.CoreV1().Pods(userNS).Create(rctx, pod, metav1.CreateOptions{})
			cancel()
			if err != nil {
				failed.Add(1)
				mu.Lock()
				if len(failures) < 5 {
					failures = append(failures, err.Error())
				}
				mu.Unlock()
			} else {
				created.Add(1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	time.Sleep(2 * time.Second) // some admissions before the rollout
	before := created.Load()
	began := time.Now()
	if err := roll(); err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	_, rolloutErr := c.Kubectl(ctx, "-n", opNamespace, "rollout", "status", "deployment/"+opDeployment, "--timeout=110s")
	rollout := time.Since(began)
	// The rollout is complete when the new Pods are available; the old
	// ones still terminate (SIGTERM, up to terminationGracePeriodSeconds):
	// the load goes on until they are gone.
	gone := rolloutErr == nil && eventually(ctx, 90*time.Second, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(opNamespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 2 && pods.Items[0].DeletionTimestamp == nil && pods.Items[1].DeletionTimestamp == nil
	})
	oldGone := time.Since(began)
	during := created.Load() - before
	time.Sleep(2 * time.Second) // and some after
	close(stop)
	wg.Wait()
	if rolloutErr != nil {
		t.Fatalf("rollout: %v%s", rolloutErr, podSummary(ctx, cs, opNamespace))
	}
	if !gone {
		t.Fatalf("the old operator Pods did not terminate within 90s%s", podSummary(ctx, cs, opNamespace))
	}
	waitAvailable(ctx, t, cs, 2, time.Minute)
	// Every admitted Pod went through the mutating webhook.
	load, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=load"})
	if err != nil {
		t.Fatal(err)
	}
	annotated := 0
	for _, p := range load.Items {
		if p.Annotations["example-mutating-admission-webhook"] == "foo" {
			annotated++
		}
	}
	if annotated != len(load.Items) || int64(len(load.Items)) != created.Load() {
		t.Errorf("%d Pods created, %d listed, %d of them annotated by the webhook", created.Load(), len(load.Items), annotated)
	}
	if err := cs.CoreV1().Pods(userNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=load"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: %s under Pod creation → rollout complete in %s, old Pods gone in %s; %d Pods admitted in that time, %d in all, each annotated by the webhook, %d failed admissions",
		what, rollout.Round(100*time.Millisecond), oldGone.Round(100*time.Millisecond), during, created.Load(), failed.Load())
	if failed.Load() > 0 {
		t.Errorf("%d Pod creations failed during the rollout; first: %s", failed.Load(), strings.Join(failures, " | "))
	}
}
