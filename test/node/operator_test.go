package node_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/node"
)

// What config/default deploys, as kustomize names it.
const (
	opNamespace  = "hexagonal-operator-system"
	opDeployment = "hexagonal-operator-controller-manager"
	opLease      = "hexagonal-operator-leader"
	userNS       = "shop"
)

// nodeWithOperatorImage starts a node cluster with bin/operator's image
// imported as node.OperatorIMG, and returns it with a context ending
// after timeout (or with the test) and its admin clients.
func nodeWithOperatorImage(t *testing.T, timeout time.Duration) (*node.Cluster, context.Context, kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	c := node.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	dyn, err := dynamic.NewForConfig(c.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	operatorBin := filepath.Join(c.Bin, "operator")
	if err := c.ImportImage(ctx, "operator", func(context.Context) (node.Image, error) { return node.OperatorImage(operatorBin) }); err != nil {
		t.Fatalf("%v (make test-node runs make build first)", err)
	}
	return c, ctx, c.Clientset(), dyn
}

// TestOperatorOnANode deploys the operator's image with `make deploy` onto
// a real node and runs the scenarios against it in order, then removes it
// with `make undeploy`. Each step prints its figure.
func TestOperatorOnANode(t *testing.T) {
	c, ctx, cs, dyn := nodeWithOperatorImage(t, 25*time.Minute)

	began := time.Now()
	if out, err := c.Make(ctx, "deploy"); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("make deploy:\n%s", strings.TrimSpace(out))
	}
	waitAvailable(ctx, t, cs, 2, 3*time.Minute)
	t.Logf("figure: make deploy → Deployment %s Available 2/2 in %s", opDeployment, time.Since(began).Round(100*time.Millisecond))

	ok := t.Run("user Deployment and ChaosPod", func(t *testing.T) { userWorkloads(ctx, t, cs, dyn) })
	ok = ok && t.Run("metrics through the Service", func(t *testing.T) { metricsThroughService(ctx, t, c, cs) })
	ok = ok && t.Run("Prometheus scrapes and alerts", func(t *testing.T) { prometheusScrapesAndAlerts(ctx, t, cs) })
	ok = ok && t.Run("self-mode certificates through the Service", func(t *testing.T) { selfModeCertificates(ctx, t, c, cs, dyn) })
	ok = ok && t.Run("leader Pod deleted", func(t *testing.T) { leaderPodDeleted(ctx, t, cs) })
	ok = ok && t.Run("leader killed", func(t *testing.T) { leaderKilled(ctx, t, cs) })
	ok = ok && t.Run("rollout restart under Pod creation", func(t *testing.T) { rolloutUnderPodCreation(ctx, t, c, cs) })
	ok = ok && t.Run("undeploy leaves nothing", func(t *testing.T) { undeploy(ctx, t, c, cs, dyn) })
	if !ok {
		t.FailNow()
	}
}

// waitAvailable waits until the operator's Deployment has want available
// replicas, all updated, and is Available.
func waitAvailable(ctx context.Context, t *testing.T, cs kubernetes.Interface, want int32, timeout time.Duration) {
	t.Helper()
	var last string
	ok := eventually(ctx, timeout, 250*time.Millisecond, func() bool {
		d, err := cs.AppsV1().Deployments(opNamespace).Get(ctx, opDeployment, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprintf("replicas %d, updated %d, ready %d, available %d, generation %d observed %d",
			d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Generation, d.Status.ObservedGeneration)
		return d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == want &&
			d.Status.UpdatedReplicas == want && d.Status.Replicas == want && condition(d, appsv1.DeploymentAvailable)
	})
	if !ok {
		t.Fatalf("Deployment %s/%s not Available %d/%d within %s: %s\npods: %s", opNamespace, opDeployment, want, want, timeout, last, podSummary(ctx, cs, opNamespace))
	}
}

func condition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// eventually polls check every interval until it holds or timeout passes.
func eventually(ctx context.Context, timeout, interval time.Duration, check func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if check() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(interval)
	}
}

// podSummary describes the namespace's Pods for a failure message.
func podSummary(ctx context.Context, cs kubernetes.Interface, ns string) string {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "\n  %s %s ip=%s", p.Name, p.Status.Phase, p.Status.PodIP)
		for _, s := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " %s ready=%v restarts=%d", s.Name, s.Ready, s.RestartCount)
			if s.State.Waiting != nil {
				fmt.Fprintf(&b, " waiting=%s:%s", s.State.Waiting.Reason, s.State.Waiting.Message)
			}
			if s.LastTerminationState.Terminated != nil {
				fmt.Fprintf(&b, " last=%s(%d):%s", s.LastTerminationState.Terminated.Reason, s.LastTerminationState.Terminated.ExitCode, s.LastTerminationState.Terminated.Message)
			}
		}
	}
	return b.String()
}

func pauseContainer() corev1.Container {
	return corev1.Container{
		Name: "pause", Image: node.PauseImage, ImagePullPolicy: corev1.PullIfNotPresent,
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65535), AllowPrivilegeEscalation: ptr.To(false)},
	}
}

// userWorkloads: a user's Deployment gets its ReplicaSet labeled and its
// Pods annotated, and they run; a ChaosPod's Pod runs and is replaced at
// each nextStop.
func userWorkloads(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: userNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{pauseContainer()}, TerminationGracePeriodSeconds: ptr.To[int64](1)},
			},
		},
	}
	began := time.Now()
	// The API server learns the webhook configuration's CA a moment after
	// the operator writes it; until then Pod admission fails closed.
	var err error
	if !eventually(ctx, time.Minute, 500*time.Millisecond, func() bool {
		_, err = cs.AppsV1().Deployments(userNS).Create(ctx, dep, metav1.CreateOptions{})
		return err == nil
	}) {
		t.Fatalf("create Deployment: %v", err)
	}
	var state string
	if !eventually(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		rss, err := cs.AppsV1().ReplicaSets(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil || len(rss.Items) != 1 || rss.Items[0].Labels["hello"] != "world" {
			state = fmt.Sprintf("replicasets: %v %v", len(rssItems(rss)), err)
			return false
		}
		pods, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Annotations["example-mutating-admission-webhook"] == "foo" {
				running++
			}
		}
		state = fmt.Sprintf("%d of %d Pods annotated and Running", running, len(pods.Items))
		return running == 2
	}) {
		t.Fatalf("Deployment web: %s%s", state, podSummary(ctx, cs, userNS))
	}
	t.Logf("figure: user Deployment → ReplicaSet labeled hello=world, 2 Pods annotated and Running in %s", time.Since(began).Round(100*time.Millisecond))

	chaos := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "chaosapps.metamagical.io/v1",
		"kind":       "ChaosPod",
		"metadata": map[string]any{
			"name": "chaos", "namespace": userNS,
			"annotations": map[string]any{"chaosapps.metamagical.io/stop-interval": "8s"},
		},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "chaos"}},
			"spec": map[string]any{
				"terminationGracePeriodSeconds": int64(1),
				"containers": []any{map[string]any{
					"name": "pause", "image": node.PauseImage,
					"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": int64(65535), "allowPrivilegeEscalation": false},
				}},
			},
		}},
	}}
	began = time.Now()
	if _, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).Create(ctx, chaos, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Three Pods in turn, each Running: the first and two replacements.
	seen := map[string]time.Duration{}
	var order []string
	if !eventually(ctx, 90*time.Second, 200*time.Millisecond, func() bool {
		p, err := cs.CoreV1().Pods(userNS).Get(ctx, "chaos", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			if _, ok := seen[string(p.UID)]; !ok {
				seen[string(p.UID)] = time.Since(began)
				order = append(order, string(p.UID))
			}
		}
		return len(order) >= 3
	}) {
		t.Fatalf("ChaosPod: %d Pods seen Running, want 3%s", len(order), podSummary(ctx, cs, userNS))
	}
	var times []string
	for _, uid := range order {
		times = append(times, seen[uid].Round(100*time.Millisecond).String())
	}
	t.Logf("figure: ChaosPod (stop-interval 8s) → Pods Running at %s after create: replaced at each nextStop", strings.Join(times, ", "))
}

func rssItems(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet {
	if l == nil {
		return nil
	}
	return l.Items
}

// undeploy runs `make undeploy` and checks that nothing of the operator's
// is left: namespace, CRD, cluster roles and bindings, webhook
// configurations, admission policies.
//
// The user's ChaosPods go first, as before any uninstall: deleted with the
// CRD instead, a ChaosPod's Pod was still Running a minute later in one run
// of three — the garbage collector resolves owners through discovery, where
// the kind is gone with its CRD (docs/node.md).
func undeploy(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, dyn dynamic.Interface) {
	if err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=chaos"})
		return err == nil && len(pods.Items) == 0
	}) {
		t.Fatalf("the ChaosPod's Pod outlived the ChaosPod by a minute%s", podSummary(ctx, cs, userNS))
	}
	began := time.Now()
	if _, err := c.Make(ctx, "undeploy"); err != nil {
		t.Fatal(err)
	}
	kinds := "namespaces,customresourcedefinitions,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings"
	var left []string
	if !eventually(ctx, 2*time.Minute, 500*time.Millisecond, func() bool {
		out, err := c.Kubectl(ctx, "get", kinds, "-o", "name")
		if err != nil {
			left = []string{err.Error()}
			return false
		}
		left = nil
		for _, name := range strings.Fields(out) {
			if strings.Contains(name, "hexagonal-operator") || strings.Contains(name, "chaosapps") {
				left = append(left, name)
			}
		}
		return len(left) == 0
	}) {
		t.Fatalf("after make undeploy: %s left", strings.Join(left, ", "))
	}
	t.Logf("figure: make undeploy → nothing of the operator's left in %s", time.Since(began).Round(100*time.Millisecond))
}
