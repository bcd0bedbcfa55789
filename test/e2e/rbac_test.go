package e2e_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// exercisedElsewhere are granted permissions this test does not see used,
// each with the reason. Everything else config/rbac grants must show up in
// the audit log, or the test fails.
var exercisedElsewhere = map[string]string{
	"update secrets":             "self mode rotates the Secret at 2/3 of a certificate's life; covered by internal/adapters/certs' selfissued tests",
	"patch events.k8s.io/events": "client-go patches an Event into a series only when the same event repeats for the same object version (a reconcile on a stale cache); not reproducible on demand",
	"update chaosapps.metamagical.io/chaospods/finalizers": "asked by the OwnerReferencesPermissionEnforcement admission plugin of the test's API server when a ChaosPod's Pod is created, an authorizer call the audit log does not show; the ChaosPod cycles below fail without it",
}

// grant is one (verb, resource) a Role or ClusterRole bound to the
// operator's ServiceAccount allows.
type grant struct {
	verb, group, resource string
	namespace             string // "" for a ClusterRole
	names                 []string
	from                  string
}

func (g grant) key() string {
	if g.group == "" {
		return g.verb + " " + g.resource
	}
	return g.verb + " " + g.group + "/" + g.resource
}

func (g grant) allows(e controlplane.AuditEvent) bool {
	r := e.ObjectRef
	if r == nil || e.Verb != g.verb || r.APIGroup != g.group {
		return false
	}
	res := r.Resource
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	return res == g.resource &&
		(g.namespace == "" || r.Namespace == g.namespace) &&
		(len(g.names) == 0 || slices.Contains(g.names, r.Name))
}

// grantsOf lists what objs (rendered RBAC) grant subject.
func grantsOf(t *testing.T, objs []*unstructured.Unstructured, subject rbacv1.Subject) []grant {
	t.Helper()
	rules := map[string][]rbacv1.PolicyRule{} // "Kind/namespace/name"
	for _, o := range objs {
		switch o.GetKind() {
		case "Role":
			rules["Role/"+o.GetNamespace()+"/"+o.GetName()] = convert[rbacv1.Role](t, o).Rules
		case "ClusterRole":
			rules["ClusterRole//"+o.GetName()] = convert[rbacv1.ClusterRole](t, o).Rules
		}
	}
	var out []grant
	for _, o := range objs {
		var ref rbacv1.RoleRef
		var subjects []rbacv1.Subject
		namespace := ""
		switch o.GetKind() {
		case "RoleBinding":
			b := convert[rbacv1.RoleBinding](t, o)
			ref, subjects, namespace = b.RoleRef, b.Subjects, b.Namespace
		case "ClusterRoleBinding":
			b := convert[rbacv1.ClusterRoleBinding](t, o)
			ref, subjects = b.RoleRef, b.Subjects
		default:
			continue
		}
		if !slices.Contains(subjects, subject) {
			continue
		}
		roleNS := namespace
		if ref.Kind == "ClusterRole" {
			roleNS = ""
		}
		rs, ok := rules[ref.Kind+"/"+roleNS+"/"+ref.Name]
		require.True(t, ok, "%s %s refers to a missing %s %s", o.GetKind(), o.GetName(), ref.Kind, ref.Name)
		for _, r := range rs {
			require.Empty(t, r.NonResourceURLs, "%s grants the operator non-resource URLs it does not need", ref.Name)
			for _, v := range r.Verbs {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						require.NotContains(t, []string{v, g, res}, "*", "%s uses a wildcard", ref.Name)
						out = append(out, grant{verb: v, group: g, resource: res, namespace: namespace, names: r.ResourceNames, from: ref.Kind + " " + ref.Name})
					}
				}
			}
		}
	}
	return out
}

// identityKinds are the kinds that say what the operator may do: RBAC and
// the admission policies that confine it.
var identityKinds = []string{"Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// rbacOf is config/default's RBAC and admission policies: config/rbac and
// config/policy with the namespace and prefix they are deployed with.
func rbacOf(t *testing.T) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range render(t, "config", "default") {
		if slices.Contains(identityKinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["cluster"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["operator"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "operator"}
	kc.CurrentContext = "operator"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// externalServing readies a run of the binary with external
// certificates: three free ports (webhook, metrics, probes), a serving
// certificate issued by the control plane's CA in a new folder, and the
// CRDs of config/crd installed with their conversion calling the first
// port. It returns the ports, the folder and that webhook server.
func externalServing(t *testing.T, cp *controlplane.ControlPlane) ([]int, string, controlplane.WebhookServer) {
	t.Helper()
	ports := operatorproc.FreePorts(t, 3)
	certDir := t.TempDir()
	_, err := cp.IssueServingCert(certDir)
	require.NoError(t, err)
	server := controlplane.WebhookServer{Host: "127.0.0.1:" + strconv.Itoa(ports[0]), CABundle: cp.CACert()}
	_, err = cp.InstallCRDs(context.Background(), repoPath(t, "config", "crd"), &server)
	require.NoError(t, err)
	return ports, certDir, server
}

// startDeployedLike runs the binary with kubeconfig the way config/manager
// does (leader election, POD_NAMESPACE, secure metrics, every controller),
// on ports (webhook, metrics, health), and waits for /readyz. The caller
// picks the ports because the webhook's must be known before the binary
// starts, to install the CRD's conversion webhook and the configurations.
func startDeployedLike(t *testing.T, env []string, kubeconfig string, ports []int, extra ...string) *operatorproc.Process {
	t.Helper()
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect",
		"--leader-election-namespace=" + operatorNamespace,
		"--webhook-port=" + strconv.Itoa(ports[0]),
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(ports[1]),
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[2]),
		"--shutdown-timeout=10s",
		// The most verbose level the flag accepts, for assertNoSecrets:
		// client-go logs request bodies from V(8) unless the logging
		// adapter caps it.
		"--zap-log-level=" + highestLogLevel,
	}, extra...)
	p := operatorproc.Start(t, operatorBin, append([]string{"POD_NAMESPACE=" + operatorNamespace}, env...), args...)
	p.Webhook = "127.0.0.1:" + strconv.Itoa(ports[0])
	p.Metrics = "https://127.0.0.1:" + strconv.Itoa(ports[1])
	p.Health = "http://127.0.0.1:" + strconv.Itoa(ports[2])
	p.WaitReady(t, operatorproc.ReadyTimeout)
	return p
}

// highestLogLevel is the largest integer --zap-log-level accepts.
var highestLogLevel = strconv.Itoa(math.MaxInt)

// assertNoSecrets fails when logs hold any of secrets (whole, base64-encoded,
// or, for a PEM block, any line of its base64 body, which a JSON log line
// holds verbatim between escaped newlines), a PEM block, a bearer token in an
// Authorization header, or a request or response body logged by client-go.
func assertNoSecrets(t *testing.T, logs string, secrets ...string) {
	t.Helper()
	require.NotEmpty(t, logs)
	for i, s := range secrets {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		assert.NotContains(t, logs, s, "secret %d appears in the operator's log", i)
		assert.NotContains(t, logs, base64.StdEncoding.EncodeToString([]byte(s)), "secret %d appears base64-encoded in the operator's log", i)
		if !strings.HasPrefix(s, "-----BEGIN") {
			continue
		}
		for _, line := range strings.Split(s, "\n") {
			if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				assert.NotContains(t, logs, line, "a line of PEM block %d appears in the operator's log", i)
			}
		}
	}
	for _, marker := range []string{"-----BEGIN", "PRIVATE KEY", "Bearer ", `"msg":"Request Body"`, `"msg":"Response Body"`} {
		assert.NotContains(t, logs, marker)
	}
}

// scrape GETs the secure /metrics with token and returns the status code.
func scrape(url, token string) int {
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// The operator serves metrics with a self-signed certificate when none
	// is mounted, as the ServiceMonitor's insecureSkipVerify expects.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// The binary, run with config/rbac's ServiceAccount and every controller
// through the README's scenario (ReplicaSets, Pod admission, ChaosPods at v1
// and v2) in external and then self certificate mode, is never forbidden
// anything, and uses every permission config/rbac grants it (apart from
// exercisedElsewhere).
func TestRBACIsExactlyWhatTheOperatorUses(t *testing.T) {
	t.Parallel()
	// OwnerReferencesPermissionEnforcement, as on OpenShift and hardened
	// clusters: a Pod whose owner reference blocks the owner's deletion
	// needs update on the owner's finalizers. The ServiceAccount plugin on,
	// as in every cluster: Pods run as the ServiceAccount they name, which
	// the template policy holds the operator's to.
	cp := controlplane.StartT(t, controlplane.Options{
		AuditPolicy: controlplane.DefaultAuditPolicy, ControllerManager: true,
		APIServerFlags: []string{"--enable-admission-plugins=OwnerReferencesPermissionEnforcement", "--disable-admission-plugins="},
	})
	ctx := context.Background()
	admin := cp.Clientset()

	rbac := rbacOf(t)
	require.NoError(t, cp.Apply(ctx, rbac...))
	saCfg, err := cp.ServiceAccountConfig(ctx, operatorNamespace, operatorServiceAccount)
	require.NoError(t, err)
	kubeconfig := writeKubeconfig(t, saCfg)

	// Phase 1: external certificates, the full scenario. The CRD comes
	// first: the chaospod controller refuses to start without it.
	// Informers list then watch, as against API servers without streaming
	// lists (client-go falls back to that); phase 2 streams.
	ports, certDir, server := externalServing(t, cp)
	// From config/default, so the configurations carry the names the
	// self-mode rules allow.
	_, err = cp.InstallWebhooks(ctx, repoPath(t, "config", "default"), server)
	require.NoError(t, err)
	p := startDeployedLike(t, []string{"KUBE_FEATURE_WatchListClient=false"}, kubeconfig, ports,
		"--webhook-cert-mode=external", "--webhook-cert-dir="+certDir)

	require.Eventually(t, func() bool {
		lease, err := admin.CoordinationV1().Leases(operatorNamespace).Get(ctx, "hexagonal-operator-leader", metav1.GetOptions{})
		return err == nil && ptr.Deref(lease.Spec.HolderIdentity, "") != ""
	}, 30*time.Second, 100*time.Millisecond, "operator holds the Lease")

	const ns = "rbac-e2e"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	// The ServiceAccount plugin refuses a Pod whose ServiceAccount is
	// missing, and no controller here makes "default".
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	rs := replicaSet(ns, "web")
	rs.Spec.Replicas = ptr.To[int32](1) // the controller manager creates a Pod: admitted by the webhooks
	_, err = admin.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := admin.AppsV1().ReplicaSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Labels["hello"] == "world"
	}, 30*time.Second, 100*time.Millisecond, "ReplicaSet labeled")
	require.Eventually(t, func() bool {
		return hasEvent(ctx, admin, ns, "ReplicaSet", "web", "Labeled")
	}, 30*time.Second, 100*time.Millisecond, "Labeled event recorded")
	require.Eventually(t, func() bool {
		pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool {
			return p.Annotations["example-mutating-admission-webhook"] == "foo"
		})
	}, 60*time.Second, 200*time.Millisecond, "the ReplicaSet's Pod admitted through the webhooks")

	// ChaosPods: both versions cycle side by side (v1's random interval is
	// up to 20s), then the webhooks deny, then both are deleted so that
	// phase 2, whose webhooks the API server cannot reach, has no work.
	dyn, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	chaos := []chaosPodVersion{
		{name: "chaos-v1", manifest: chaosPodV1("chaos-v1"), resource: dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns), nextStop: []string{"spec", "nextStop"}},
		{name: "chaos-v2", manifest: chaosPodV2("chaos-v2", "3s"), resource: dyn.Resource(chaosv2.GroupVersionResource).Namespace(ns), nextStop: []string{"spec", "stop", "at"}},
	}
	require.True(t, t.Run("chaospods", func(t *testing.T) {
		for _, c := range chaos {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.runCycle(t, admin, ns)
			})
		}
	}), "ChaosPod cycles")
	for _, c := range chaos {
		c.deniesDelay(t)
	}
	_, err = chaos[1].resource.Create(ctx, chaosPodV2("too-slow", "25h"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "between 1s and 24h")
	for _, c := range chaos {
		require.NoError(t, c.resource.Delete(ctx, c.name, metav1.DeleteOptions{}))
	}
	for _, c := range chaos {
		require.Eventually(t, func() bool {
			_, errCP := c.resource.Get(ctx, c.name, metav1.GetOptions{})
			_, errPod := admin.CoreV1().Pods(ns).Get(ctx, c.name, metav1.GetOptions{})
			return apierrors.IsNotFound(errCP) && apierrors.IsNotFound(errPod)
		}, 90*time.Second, 200*time.Millisecond, "ChaosPod %s deleted, its Pod garbage collected", c.name)
	}

	// Secure metrics: a scraper bound to metrics-reader gets in, a
	// stranger does not (TokenReview and SubjectAccessReview by the
	// operator).
	scraper := bindScraper(t, cp, "scraper", true)
	stranger := bindScraper(t, cp, "stranger", false)
	require.Eventually(t, func() bool { return scrape(p.Metrics, scraper) == http.StatusOK }, 30*time.Second, 200*time.Millisecond, "metrics-reader may scrape")
	assert.Equal(t, http.StatusForbidden, scrape(p.Metrics, stranger))

	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.Wait(t, 20*time.Second), "clean stop (releases the Lease)")
	phase1Logs := p.Output()

	// Phase 2: self mode issues the Secret and writes the CA bundle into
	// both webhook configurations and the CRD's conversion webhook.
	p = startDeployedLike(t, nil, kubeconfig, operatorproc.FreePorts(t, 3), "--webhook-cert-mode=self", "--webhook-cert-dir="+t.TempDir())
	require.Eventually(t, func() bool {
		_, err := admin.CoreV1().Secrets(operatorNamespace).Get(ctx, "hexagonal-operator-webhook-cert", metav1.GetOptions{})
		if err != nil {
			return false
		}
		m, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "hexagonal-operator-mutating-webhook-configuration", metav1.GetOptions{})
		if err != nil || string(m.Webhooks[0].ClientConfig.CABundle) == string(cp.CACert()) {
			return false
		}
		v, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "hexagonal-operator-validating-webhook-configuration", metav1.GetOptions{})
		if err != nil || string(v.Webhooks[0].ClientConfig.CABundle) == string(cp.CACert()) {
			return false
		}
		crd, err := dyn.Resource(crdResource).Get(ctx, "chaospods."+chaosv1.GroupName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		bundle, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		return bundle != "" && bundle != base64.StdEncoding.EncodeToString(cp.CACert())
	}, 30*time.Second, 200*time.Millisecond, "self mode wrote the Secret and the three CA bundles")
	// Scrapes in this phase too, so its log is checked with TokenReviews
	// of both tokens in it.
	require.Eventually(t, func() bool { return scrape(p.Metrics, scraper) == http.StatusOK }, 30*time.Second, 200*time.Millisecond, "metrics-reader may scrape in self mode")
	assert.Equal(t, http.StatusForbidden, scrape(p.Metrics, stranger))
	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.Equal(t, 0, p.Wait(t, 20*time.Second))

	// Neither run wrote a credential, key or certificate to its log, at the
	// most verbose level, not even the tokens it was handed or
	// authenticated.
	secret, err := admin.CoreV1().Secrets(operatorNamespace).Get(ctx, "hexagonal-operator-webhook-cert", metav1.GetOptions{})
	require.NoError(t, err)
	// client-go's verbose lines are there, up to the logging adapter's cap
	// (V(5)) and none above it.
	assert.Regexp(t, `"level":"Level\(-[2-5]\)"`, phase1Logs, "client-go's V(2)..V(5) lines are logged")
	assert.NotRegexp(t, `"level":"Level\(-([6-9]|[1-9][0-9]+)\)"`, phase1Logs+p.Output(), "no line above V(5) is logged")
	assertNoSecrets(t, phase1Logs+p.Output(), saCfg.BearerToken, scraper, stranger,
		string(secret.Data["tls.key"]), string(secret.Data["ca.key"]), string(secret.Data["tls.crt"]), string(secret.Data["ca.crt"]))

	// The audit log, as the operator's ServiceAccount.
	user := "system:serviceaccount:" + operatorNamespace + ":" + operatorServiceAccount
	grants := grantsOf(t, rbac, rbacv1.Subject{Kind: "ServiceAccount", Name: operatorServiceAccount, Namespace: operatorNamespace})
	require.NotEmpty(t, grants)
	var requests []controlplane.AuditEvent
	require.Eventually(t, func() bool { // the log is written asynchronously
		events, err := cp.AuditEvents()
		require.NoError(t, err)
		requests = requests[:0]
		for _, e := range events {
			if e.User.Username == user && e.Stage == "ResponseComplete" {
				requests = append(requests, e)
			}
		}
		return slices.ContainsFunc(requests, func(e controlplane.AuditEvent) bool {
			return e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "secrets"
		})
	}, 10*time.Second, 200*time.Millisecond, "audit log has the last phase")

	var forbidden, refusedByAdmission []string
	for _, e := range requests {
		if e.ResponseStatus == nil || e.ResponseStatus.Code != http.StatusForbidden {
			continue
		}
		if e.ForbiddenByAuthorizer() {
			forbidden = append(forbidden, e.Verb+" "+e.RequestURI)
		} else {
			refusedByAdmission = append(refusedByAdmission, e.Verb+" "+e.RequestURI+": "+e.ResponseStatus.Message)
		}
	}
	assert.Empty(t, forbidden, "requests of the operator that RBAC refused")
	// An admission plugin may refuse for a moment what it will allow: the
	// API server's admission plugins learn a new CRD's kind some seconds
	// after it is established, and OwnerReferencesPermissionEnforcement
	// cannot check a ChaosPod owner before that. The controller retries;
	// the cycles above completed.
	for _, r := range refusedByAdmission {
		assert.Contains(t, r, "cannot find RESTMapping", "only the transient refusal of a kind not known yet: %s", r)
	}
	t.Logf("figure: operator requests refused by admission while the API server learned the CRD: %d", len(refusedByAdmission))

	unused := map[string]string{}
	for _, g := range grants {
		if slices.ContainsFunc(requests, g.allows) {
			continue
		}
		if _, ok := exercisedElsewhere[g.key()]; ok {
			continue
		}
		unused[g.key()] = g.from
	}
	assert.Empty(t, unused, "granted by config/rbac, never used by the operator: remove them or add a reason to exercisedElsewhere")

	// Every exception names a real grant, so the list cannot rot.
	for key := range exercisedElsewhere {
		assert.True(t, slices.ContainsFunc(grants, func(g grant) bool { return g.key() == key }), "exercisedElsewhere names %q, which config/rbac does not grant", key)
	}
	t.Logf("operator requests seen: %s", summarize(requests))
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// chaosPodVersion is one ChaosPod of the scenario, read and written at its
// own API version (v2 goes through the conversion webhook).
type chaosPodVersion struct {
	name     string
	manifest *unstructured.Unstructured
	resource dynamic.ResourceInterface
	nextStop []string // the field path of v1's spec.nextStop at this version
}

// runCycle creates the ChaosPod and follows one cycle: the
// defaulter sets the stop, the operator creates the Pod (admitted by the
// Pod webhooks) and records the run, stops the Pod at the stop, creates the
// next and records that run.
func (c chaosPodVersion) runCycle(t *testing.T, admin kubernetes.Interface, ns string) {
	ctx := context.Background()
	created, err := c.resource.Create(ctx, c.manifest, metav1.CreateOptions{})
	require.NoError(t, err)
	_, defaulted, _ := unstructured.NestedString(created.Object, c.nextStop...)
	assert.True(t, defaulted, "the defaulting webhook sets %s", strings.Join(c.nextStop, "."))

	first := c.podRecorded(t, admin, ns, "")
	stop := c.stopOf(t)
	second := c.podRecorded(t, admin, ns, first.UID)
	assert.False(t, second.CreationTimestamp.Time.Before(stop), "the next Pod (%s) is created at or after the stop (%s)", second.CreationTimestamp.Time, stop)
	require.Eventually(t, func() bool {
		return hasEvent(ctx, admin, ns, "ChaosPod", c.name, "PodCreated") && hasEvent(ctx, admin, ns, "ChaosPod", c.name, "PodStopped")
	}, 30*time.Second, 200*time.Millisecond, "PodCreated and PodStopped events recorded")
}

// podRecorded waits for a Pod of the ChaosPod other than previous, checks
// it, and waits until status.lastRun is its creation time.
func (c chaosPodVersion) podRecorded(t *testing.T, admin kubernetes.Interface, ns string, previous types.UID) *corev1.Pod {
	ctx := context.Background()
	var pod *corev1.Pod
	require.Eventually(t, func() bool {
		got, err := admin.CoreV1().Pods(ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil || got.UID == previous || got.DeletionTimestamp != nil {
			return false
		}
		pod = got
		return true
	}, 60*time.Second, 100*time.Millisecond, "a Pod of ChaosPod %s (after %q)", c.name, previous)
	owner := metav1.GetControllerOf(pod)
	require.NotNil(t, owner, "the Pod is controlled by its ChaosPod")
	assert.Equal(t, "ChaosPod", owner.Kind)
	assert.Equal(t, c.name, owner.Name)
	assert.Equal(t, "foo", pod.Annotations["example-mutating-admission-webhook"], "the Pod was admitted through the Pod webhooks")
	want := pod.CreationTimestamp.UTC().Format(time.RFC3339)
	require.Eventually(t, func() bool {
		obj, err := c.resource.Get(ctx, c.name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		lastRun, _, _ := unstructured.NestedString(obj.Object, "status", "lastRun")
		return lastRun == want
	}, 30*time.Second, 100*time.Millisecond, "status.lastRun of %s is its Pod's creation time %s", c.name, want)
	return pod
}

// stopOf reads the recorded stop of the current run.
func (c chaosPodVersion) stopOf(t *testing.T) time.Time {
	obj, err := c.resource.Get(context.Background(), c.name, metav1.GetOptions{})
	require.NoError(t, err)
	raw, ok, _ := unstructured.NestedString(obj.Object, c.nextStop...)
	require.True(t, ok, "%s set", strings.Join(c.nextStop, "."))
	stop, err := time.Parse(time.RFC3339, raw)
	require.NoError(t, err)
	return stop
}

// deniesDelay: an update moving the stop more than an hour past one still
// ahead is denied by the validating webhook of the object's version. Dry
// run, so that nothing changes should the stop have passed meanwhile (the
// update is then allowed, and retried on a fresh read).
func (c chaosPodVersion) deniesDelay(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	field := "." + strings.Join(c.nextStop, ".")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		obj, err := c.resource.Get(ctx, c.name, metav1.GetOptions{})
		if !assert.NoError(ct, err) {
			return
		}
		raw, _, _ := unstructured.NestedString(obj.Object, c.nextStop...)
		stop, err := time.Parse(time.RFC3339, raw)
		if !assert.NoError(ct, err) {
			return
		}
		if !assert.NoError(ct, unstructured.SetNestedField(obj.Object, stop.Add(2*time.Hour).Format(time.RFC3339), c.nextStop...)) {
			return
		}
		_, err = c.resource.Update(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		assert.ErrorContains(ct, err, "it is not allowed to delay "+field+" for more than 1 hour")
	}, 30*time.Second, 200*time.Millisecond, "delaying %s of %s by 2h is denied", field, c.name)
}

func podTemplate(app string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": app}},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"},
		}},
	}
}

// chaosPodV1 has no interval: each Pod lives a random 10s or 20s.
func chaosPodV1(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv1.SchemeGroupVersion.String(),
		"kind":       chaosv1.Kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"template": podTemplate(name)},
	}}
}

func chaosPodV2(name, interval string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv2.SchemeGroupVersion.String(),
		"kind":       chaosv1.Kind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"podTemplate": podTemplate(name),
			"stop":        map[string]any{"interval": interval},
		},
	}}
}

// hasEvent reports whether an events.k8s.io Event with reason regards the
// named object of kind in ns.
func hasEvent(ctx context.Context, cs kubernetes.Interface, ns, kind, name, reason string) bool {
	evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	return err == nil && slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool {
		return e.Reason == reason && e.Regarding.Kind == kind && e.Regarding.Name == name
	})
}

// bindScraper makes a ServiceAccount (bound to metrics-reader when bind)
// and returns a token for it.
func bindScraper(t *testing.T, cp *controlplane.ControlPlane, name string, bind bool) string {
	t.Helper()
	ctx := context.Background()
	if bind {
		_, err := cp.Clientset().RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "hexagonal-operator-metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "monitoring"}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	cfg, err := cp.ServiceAccountConfig(ctx, "monitoring", name)
	require.NoError(t, err)
	return cfg.BearerToken
}

func summarize(events []controlplane.AuditEvent) string {
	seen := map[string]bool{}
	for _, e := range events {
		if e.ObjectRef == nil {
			seen[e.Verb+" "+e.RequestURI] = true
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		if e.ObjectRef.APIGroup != "" {
			res = e.ObjectRef.APIGroup + "/" + res
		}
		seen[e.Verb+" "+res] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
