package node_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

const (
	// promNamespace and promAccount are Prometheus's identity in the
	// cluster, as a Prometheus installed in it would have one.
	promNamespace = "monitoring"
	promAccount   = "prometheus"
	// promInterval is the scrape and evaluation interval: short, so that
	// the alert's `for:` is most of the wait.
	promInterval = 2 * time.Second
	// refusingAlert is the alert the test makes fire: its `for:` (2m) is
	// the shortest that the test can reach without cutting the operator
	// off from the API server, which its metrics' authorization needs.
	refusingAlert = "HexagonalOperatorWebhookRefusing"
	// noTokenJob scrapes the same targets without a token.
	noTokenJob = "no-token"
)

// serviceMonitor is what the test reads of config/prometheus/monitor.yaml.
type serviceMonitor struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		JobLabel string `json:"jobLabel"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Path            string `json:"path"`
			Scheme          string `json:"scheme"`
			BearerTokenFile string `json:"bearerTokenFile"`
			TLSConfig       struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// promScrapeLabels are the target labels the Prometheus Operator gives a
// ServiceMonitor's targets and that the alerts group by.
var promScrapeLabels = []string{"job", "namespace", "pod", "service", "endpoint", "container"}

// prometheusScrapesAndAlerts: Prometheus (Debian's, on the host) scrapes
// the operator's replicas as config/prometheus/monitor.yaml asks, with the
// token of a ServiceAccount bound to metrics-reader, evaluates
// config/prometheus/alerts.yaml unchanged, and fires
// HexagonalOperatorWebhookRefusing once a client is refused by a replica's
// webhook server.
func prometheusScrapesAndAlerts(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	monitor := readServiceMonitor(t, filepath.Join(root, "config", "prometheus", "monitor.yaml"))
	dir := t.TempDir()
	tokenFile := prometheusIdentity(ctx, t, cs, dir)
	rules := operatortest.PrometheusRulesFile(t, filepath.Join(root, "config", "prometheus", "alerts.yaml"), dir, "alerts.rules.yaml")
	targetsFile := filepath.Join(dir, "targets.json")
	discoverTargets(ctx, t, cs, targetsFile)
	cfg := prometheusConfig(t, monitor, tokenFile, targetsFile, rules)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o600))

	began := time.Now()
	prom := startPrometheus(ctx, t, dir)
	job := monitor.Spec.Selector.MatchLabels[monitor.Spec.JobLabel]
	require.NotEmpty(t, job, "the ServiceMonitor's jobLabel %q is one of its selector's labels", monitor.Spec.JobLabel)

	// Every replica scraped with the token over TLS, labelled as the
	// Prometheus Operator labels it.
	var targets []promTarget
	scraped := eventually(ctx, 90*time.Second, 500*time.Millisecond, func() bool {
		targets = prom.targets(ctx, t, job)
		if len(targets) != 2 {
			return false
		}
		for _, tg := range targets {
			if tg.Health != "up" {
				return false
			}
		}
		return true
	})
	require.True(t, scraped, "both replicas up in job %s: %+v\n%s", job, targets, prom.log())
	firstScrape := time.Since(began)
	for _, tg := range targets {
		assert.Empty(t, tg.LastError)
		assert.True(t, strings.HasPrefix(tg.ScrapeURL, "https://"), tg.ScrapeURL)
		for _, l := range promScrapeLabels {
			assert.NotEmpty(t, tg.Labels[l], "target label %s of %s", l, tg.ScrapeURL)
		}
		assert.Equal(t, opNamespace, tg.Labels["namespace"])
		assert.Equal(t, metricsService, tg.Labels["service"])
		assert.True(t, strings.HasPrefix(tg.Labels["pod"], opDeployment+"-"), tg.Labels["pod"])
	}
	up := prom.query(ctx, t, fmt.Sprintf(`up{job=%q}`, job))
	require.Len(t, up, 2, "up{job=%q}", job)
	for _, s := range up {
		assert.Equal(t, "1", s.value(), "up of %s", s.Metric["pod"])
	}
	var series []promSample
	require.True(t, eventually(ctx, 30*time.Second, 500*time.Millisecond, func() bool {
		series = prom.query(ctx, t, fmt.Sprintf(`count by (pod) ({__name__=~"controller_runtime_.+", job=%q})`, job))
		return len(series) == 2
	}), "controller_runtime_* series of both replicas: %+v", series)

	// The same targets without the token: the operator turns Prometheus
	// away, so the binding is what makes the scrape work.
	var anonymous []promTarget
	require.True(t, eventually(ctx, 30*time.Second, 500*time.Millisecond, func() bool {
		anonymous = prom.targets(ctx, t, noTokenJob)
		return len(anonymous) == 2 && anonymous[0].Health == "down" && anonymous[1].Health == "down"
	}), "job %s down on both replicas: %+v", noTokenJob, anonymous)
	for _, tg := range anonymous {
		assert.Contains(t, tg.LastError, "401", "scrape without a token")
	}

	// Every alert of alerts.yaml loaded, none broken.
	groups := prom.rules(ctx, t)
	var loaded []string
	for _, g := range groups {
		for _, r := range g.Rules {
			loaded = append(loaded, r.Name)
			assert.Equal(t, "ok", r.Health, "rule %s: %s", r.Name, r.LastError)
		}
	}
	require.Contains(t, loaded, refusingAlert)
	t.Logf("Prometheus: %d rules loaded: %s", len(loaded), strings.Join(loaded, ", "))

	// A client that holds more of a replica's body budget than it has
	// gets 429: the alert's first half counts it from then on.
	pod, addr := webhookAddress(ctx, t, cs)
	refused := time.Now()
	statuses := exhaustBodyBudget(ctx, t, addr, func() bool {
		return len(prom.query(ctx, t, fmt.Sprintf(`operator_webhook_requests_rejected_total{job=%q, pod=%q} > 0`, job, pod))) > 0
	})
	t.Logf("webhook server of %s (%s) answered %s", pod, addr, statuses)

	var alert promAlert
	var pendingAt time.Duration
	fired := eventually(ctx, 3*time.Minute, time.Second, func() bool {
		for _, a := range prom.alerts(ctx, t) {
			if a.Labels["alertname"] != refusingAlert {
				continue
			}
			alert = a
			if a.State == "pending" && pendingAt == 0 {
				pendingAt = time.Since(refused)
			}
			return a.State == "firing"
		}
		return false
	})
	require.True(t, fired, "%s firing: last seen %+v\n%s", refusingAlert, alert, prom.log())
	firing := time.Since(refused)
	assert.Equal(t, "warning", alert.Labels["severity"])
	assert.Equal(t, opNamespace, alert.Labels["namespace"])
	assert.Equal(t, "/validate--v1-pod", alert.Labels["webhook"])
	assert.Equal(t, "https://github.com/hexagonal-operator/operator/blob/main/docs/troubleshooting.md#hexagonaloperatorwebhookrefusing", alert.Annotations["runbook_url"])
	assert.Contains(t, alert.Annotations["summary"], "/validate--v1-pod")
	t.Logf("figure: Prometheus %s → both replicas scraped over HTTPS with the metrics-reader token %s after start (401 without it); %s seen pending at %s and firing at %s after the refusals began (for: 2m, interval %s): %s",
		promVersion(t), firstScrape.Round(100*time.Millisecond), refusingAlert, pendingAt.Round(100*time.Millisecond), firing.Round(100*time.Millisecond), promInterval, alert.Annotations["summary"])
}

// readServiceMonitor reads the ServiceMonitor the test scrapes as.
func readServiceMonitor(t *testing.T, path string) serviceMonitor {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m serviceMonitor
	require.NoError(t, yaml.Unmarshal(data, &m))
	require.Equal(t, "ServiceMonitor", m.Kind)
	require.Len(t, m.Spec.Endpoints, 1, "one endpoint in %s", path)
	return m
}

// prometheusIdentity creates the ServiceAccount Prometheus runs as, bound
// to metrics-reader as docs/deploying.md says, and writes a token of it
// into dir. Everything is deleted when the test ends.
func prometheusIdentity(ctx context.Context, t *testing.T, cs kubernetes.Interface, dir string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: promNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), promNamespace, metav1.DeleteOptions{})
	})
	_, err = cs.CoreV1().ServiceAccounts(promNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: promAccount}}, metav1.CreateOptions{})
	require.NoError(t, err)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: promNamespace, Name: promAccount}}
	bindings := []*rbacv1.ClusterRoleBinding{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "node-tier-prometheus-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hexagonal-operator-metrics-reader"},
			Subjects:   subject,
		},
	}
	for _, b := range bindings {
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
		})
	}
	tr, err := cs.CoreV1().ServiceAccounts(promNamespace).CreateToken(ctx, promAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	path := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(path, []byte(tr.Status.Token), 0o600))
	return path
}

// promLabelName is a Kubernetes label's name as Prometheus's Kubernetes
// discovery spells it in its meta labels.
func promLabelName(name string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(name, "_")
}

// prometheusConfig is the scrape configuration the Prometheus Operator
// generates for the ServiceMonitor (with EndpointSlice discovery), its
// relabelings unchanged, plus a job that scrapes the same targets without
// a token. Debian's Prometheus is built without Kubernetes discovery, so
// the targets and their meta labels come from a file the test writes
// (discoverTargets) instead of from the API server.
func prometheusConfig(t *testing.T, m serviceMonitor, tokenFile, targetsFile, rules string) []byte {
	t.Helper()
	ep := m.Spec.Endpoints[0]
	// The Pod's token file in the ServiceMonitor is, outside the cluster,
	// the token written for Prometheus's ServiceAccount.
	require.NotEmpty(t, ep.BearerTokenFile, "the ServiceMonitor sends a bearer token")
	sd := []map[string]any{{"files": []string{targetsFile}, "refresh_interval": promInterval.String()}}
	var relabel []map[string]any
	for _, k := range sortedKeys(m.Spec.Selector.MatchLabels) {
		l := promLabelName(k)
		relabel = append(relabel, map[string]any{
			"action":        "keep",
			"source_labels": []string{"__meta_kubernetes_service_label_" + l, "__meta_kubernetes_service_labelpresent_" + l},
			"regex":         "(" + regexp.QuoteMeta(m.Spec.Selector.MatchLabels[k]) + ");true",
		})
	}
	relabel = append(relabel,
		map[string]any{"action": "keep", "source_labels": []string{"__meta_kubernetes_endpointslice_port_name"}, "regex": ep.Port},
		map[string]any{
			"source_labels": []string{"__meta_kubernetes_endpointslice_address_target_kind", "__meta_kubernetes_endpointslice_address_target_name"},
			"separator":     ";", "regex": "Pod;(.*)", "replacement": "${1}", "target_label": "pod",
		},
		map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "job", "replacement": "${1}"},
		map[string]any{
			"source_labels": []string{"__meta_kubernetes_service_label_" + promLabelName(m.Spec.JobLabel)},
			"target_label":  "job", "regex": "(.+)", "replacement": "${1}",
		},
		map[string]any{"target_label": "endpoint", "replacement": ep.Port},
	)
	job := func(name string, token bool, extra ...map[string]any) map[string]any {
		j := map[string]any{
			"job_name":        name,
			"honor_labels":    false,
			"scheme":          ep.Scheme,
			"metrics_path":    ep.Path,
			"tls_config":      map[string]any{"insecure_skip_verify": ep.TLSConfig.InsecureSkipVerify},
			"file_sd_configs": sd,
			"relabel_configs": append(append([]map[string]any{}, relabel...), extra...),
		}
		if token {
			j["authorization"] = map[string]any{"credentials_file": tokenFile}
		}
		return j
	}
	cfg := map[string]any{
		"global": map[string]any{
			"scrape_interval":     promInterval.String(),
			"scrape_timeout":      promInterval.String(),
			"evaluation_interval": promInterval.String(),
		},
		"rule_files": []string{rules},
		"scrape_configs": []map[string]any{
			job(fmt.Sprintf("serviceMonitor/%s/%s/0", opNamespace, m.Metadata.Name), true),
			job(noTokenJob, false, map[string]any{"target_label": "job", "replacement": noTokenJob}),
		},
	}
	out, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	return out
}

// discoverTargets writes into path what Prometheus's Kubernetes discovery
// (role endpointslice) finds in the operator's namespace: a target per
// address and port of each EndpointSlice of each Service, with its meta
// labels, those the ServiceMonitor's relabelings read among them.
func discoverTargets(ctx context.Context, t *testing.T, cs kubernetes.Interface, path string) {
	t.Helper()
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	var groups []group
	svcs, err := cs.CoreV1().Services(opNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, svc := range svcs.Items {
		eps, err := cs.DiscoveryV1().EndpointSlices(opNamespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
		require.NoError(t, err)
		for _, es := range eps.Items {
			for _, e := range es.Endpoints {
				for _, port := range es.Ports {
					if len(e.Addresses) == 0 || port.Port == nil {
						continue
					}
					labels := map[string]string{
						"__meta_kubernetes_namespace":                  opNamespace,
						"__meta_kubernetes_service_name":               svc.Name,
						"__meta_kubernetes_endpointslice_name":         es.Name,
						"__meta_kubernetes_endpointslice_port_name":    ptr.Deref(port.Name, ""),
						"__meta_kubernetes_endpointslice_port":         strconv.Itoa(int(*port.Port)),
						"__meta_kubernetes_endpointslice_address_type": string(es.AddressType),
					}
					for k, v := range svc.Labels {
						labels["__meta_kubernetes_service_label_"+promLabelName(k)] = v
						labels["__meta_kubernetes_service_labelpresent_"+promLabelName(k)] = "true"
					}
					if ref := e.TargetRef; ref != nil {
						labels["__meta_kubernetes_endpointslice_address_target_kind"] = ref.Kind
						labels["__meta_kubernetes_endpointslice_address_target_name"] = ref.Name
						if ref.Kind == "Pod" {
							labels["__meta_kubernetes_pod_name"] = ref.Name
							pod, err := cs.CoreV1().Pods(opNamespace).Get(ctx, ref.Name, metav1.GetOptions{})
							require.NoError(t, err)
							for _, c := range pod.Spec.Containers {
								for _, cp := range c.Ports {
									if cp.ContainerPort == *port.Port {
										labels["__meta_kubernetes_pod_container_name"] = c.Name
									}
								}
							}
						}
					}
					groups = append(groups, group{
						Targets: []string{net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*port.Port)))},
						Labels:  labels,
					})
				}
			}
		}
	}
	data, err := json.Marshal(groups)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// prometheus is a Prometheus server the test started.
type prometheus struct {
	base    string
	logPath string
	client  *http.Client
}

// startPrometheus runs bin/prometheus on a loopback port with dir's
// configuration and its data in dir, waits until it is ready, and stops
// it when the test ends.
func startPrometheus(ctx context.Context, t *testing.T, dir string) *prometheus {
	t.Helper()
	bin, err := controlplane.Binary("prometheus")
	require.NoError(t, err, "make tools unpacks prometheus into bin/ (hack/promtool.sh)")
	port := operatortest.FreePort(t)
	p := &prometheus{
		base:    "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		logPath: filepath.Join(dir, "prometheus.log"),
		client:  &http.Client{Timeout: 10 * time.Second},
	}
	logFile, err := os.Create(p.logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Should the test binary die, Prometheus goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	// exited closes when Prometheus has exited, waitErr then saying how.
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	})
	ready := eventually(ctx, 30*time.Second, 200*time.Millisecond, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		resp, err := p.client.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-exited:
		require.Fail(t, "prometheus exited", "%v\n%s", waitErr, p.log())
	default:
	}
	require.True(t, ready, "prometheus ready on %s\n%s", p.base, p.log())
	return p
}

// log is the end of Prometheus's log, for failure messages.
func (p *prometheus) log() string {
	data, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return "prometheus log:\n" + strings.Join(lines[max(len(lines)-30, 0):], "\n")
}

// api reads a Prometheus API answer's data into out.
func (p *prometheus) api(ctx context.Context, path string, query url.Values, out any) error {
	u := p.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("GET %s: %s: %w", u, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

type promTarget struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

// targets are the active targets whose job label is job.
func (p *prometheus) targets(ctx context.Context, t *testing.T, job string) []promTarget {
	t.Helper()
	var data struct {
		Active []promTarget `json:"activeTargets"`
	}
	require.NoError(t, p.api(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data))
	var out []promTarget
	for _, tg := range data.Active {
		if tg.Labels["job"] == job {
			out = append(out, tg)
		}
	}
	return out
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

func (s promSample) value() string {
	if len(s.Value) != 2 {
		return ""
	}
	v, _ := s.Value[1].(string)
	return v
}

// query runs an instant query, whose result must be a vector.
func (p *prometheus) query(ctx context.Context, t *testing.T, q string) []promSample {
	t.Helper()
	var data struct {
		ResultType string       `json:"resultType"`
		Result     []promSample `json:"result"`
	}
	require.NoError(t, p.api(ctx, "/api/v1/query", url.Values{"query": {q}}, &data))
	require.Equal(t, "vector", data.ResultType, q)
	return data.Result
}

type promRuleGroup struct {
	Name  string `json:"name"`
	Rules []struct {
		Name      string `json:"name"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
	} `json:"rules"`
}

func (p *prometheus) rules(ctx context.Context, t *testing.T) []promRuleGroup {
	t.Helper()
	var data struct {
		Groups []promRuleGroup `json:"groups"`
	}
	require.NoError(t, p.api(ctx, "/api/v1/rules", nil, &data))
	return data.Groups
}

type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	ActiveAt    time.Time         `json:"activeAt"`
	Value       string            `json:"value"`
}

func (p *prometheus) alerts(ctx context.Context, t *testing.T) []promAlert {
	t.Helper()
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	require.NoError(t, p.api(ctx, "/api/v1/alerts", nil, &data))
	return data.Alerts
}

// promVersion is the version line of bin/prometheus.
func promVersion(t *testing.T) string {
	bin, err := controlplane.Binary("prometheus")
	require.NoError(t, err)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(out), "\n")
	version, _, _ := strings.Cut(strings.TrimPrefix(first, "prometheus, version "), " ")
	return version
}

// webhookAddress is a Running replica's Pod and the address of its
// webhook server (the webhook Service's target port on the Pod's IP),
// which the host reaches on the node's bridge.
func webhookAddress(ctx context.Context, t *testing.T, cs kubernetes.Interface) (pod, addr string) {
	t.Helper()
	svc, err := cs.CoreV1().Services(opNamespace).Get(ctx, webhookService, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, svc.Spec.Ports)
	target := svc.Spec.Ports[0].TargetPort
	pods, err := cs.CoreV1().Pods(opNamespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector})})
	require.NoError(t, err)
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		port := target.IntValue()
		if target.Type == intstr.String {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.Name == target.StrVal {
						port = int(cp.ContainerPort)
					}
				}
			}
		}
		require.NotZero(t, port, "webhook port %s on Pod %s", target.String(), p.Name)
		return p.Name, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(port))
	}
	require.Fail(t, "no Running replica", podSummary(ctx, cs, opNamespace))
	return "", ""
}

// exhaustBodyBudget sends several large Pod reviews at once to the
// webhook server at addr from one address, holding each open before its
// last bytes, until their bodies together exceed the server's budget of
// body bytes in flight and it answers the next growth with 429. It stops
// once done reports true (or after a minute) and closes every connection,
// and returns the statuses it read.
func exhaustBodyBudget(ctx context.Context, t *testing.T, addr string, done func() bool) string {
	t.Helper()
	const (
		conns    = 8
		declared = 7_000_000 // under the 7 MiB review limit
		sent     = 5_000_000 // past the 4 MiB step, so each holds its 7 MB
	)
	var (
		mu       sync.Mutex
		open     []net.Conn
		statuses []string
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The Pod's certificate names the webhook Service, not its IP,
			// and this client only needs to be refused.
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
			if err != nil {
				mu.Lock()
				statuses = append(statuses, fmt.Sprintf("#%d dial: %v", i, err))
				mu.Unlock()
				return
			}
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			_ = conn.SetDeadline(time.Now().Add(time.Minute))
			head := fmt.Sprintf("POST /validate--v1-pod HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", webhookService, declared)
			if _, err := conn.Write([]byte(head)); err == nil {
				chunk := bytes.Repeat([]byte(" "), 64<<10)
				for n := 0; n < sent; n += len(chunk) {
					if _, err := conn.Write(chunk); err != nil {
						break
					}
				}
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-stop: // closed by the test
				return
			default:
			}
			if err != nil {
				statuses = append(statuses, fmt.Sprintf("#%d %v", i, err))
				return
			}
			_ = resp.Body.Close()
			statuses = append(statuses, fmt.Sprintf("#%d %s", i, resp.Status))
		}()
	}
	seen := eventually(ctx, time.Minute, 500*time.Millisecond, done)
	mu.Lock()
	close(stop)
	for _, c := range open {
		_ = c.Close()
	}
	got := strings.Join(statuses, "; ")
	mu.Unlock()
	wg.Wait()
	require.True(t, seen, "a refusal counted in operator_webhook_requests_rejected_total; the client read: %s", got)
	if got == "" {
		got = "nothing before the refusal was counted"
	}
	return got
}
