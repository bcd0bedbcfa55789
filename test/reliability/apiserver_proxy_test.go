package reliability_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// TestAPIServerUnreachableForTheOperatorOnly cuts the operator off from a
// healthy API server for 15 seconds: its connections go through a TCP proxy
// that then accepts connections but forwards nothing, on old connections
// and new. Everyone else still reaches the API server, which still calls
// the operator's webhooks. Admission needs nothing from the API server, so
// the operator stays ready and every Pod create meanwhile is admitted and
// mutated; the ReplicaSets created meanwhile are labeled once the proxy
// forwards again. The outage shows on operator_apiserver_reachable and in
// one log line each way.
func TestAPIServerUnreachableForTheOperatorOnly(t *testing.T) {
	t.Parallel()
	const (
		stall  = 15 * time.Second
		ns     = "proxy"
		before = 5
	)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))

	apiserver, err := url.Parse(cp.Config.Host)
	require.NoError(t, err)
	proxy := startStallingProxy(t, apiserver.Host)
	// The proxy listens on 127.0.0.1 like the API server, whose serving
	// certificate names that address: TLS still verifies end to end.
	kubeconfig := writeProxiedKubeconfig(t, cp, "https://"+proxy.addr())
	p := operatorproc.RunAgainst(t, operatorBin, cp, "--controllers=replicaset", "--kubeconfig="+kubeconfig)
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, filepath.Join(root, "config", "webhook"), controlplane.WebhookServer{Host: p.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)
	waitForPodWebhooks(t, cs, ns)
	createReplicaSets(t, cs, ns, "before", before, 2)
	waitAllLabeled(t, cs, ns, before, 30*time.Second)
	require.Eventually(t, func() bool { v, ok := reachableGauge(p); return ok && v == 1 },
		30*time.Second, 100*time.Millisecond, "operator_apiserver_reachable is 1")
	require.Positive(t, proxy.connections(), "the operator talks to the API server through the proxy")

	proxy.stall()
	stalled := time.Now()
	var (
		readyz, healthz sampler
		pods            podCreates
		replicaSets     atomic.Int32
		gaugeZero       atomic.Int64 // ns after the stall began, 0 while unseen
		wg              sync.WaitGroup
	)
	until := stalled.Add(stall)
	every := func(period time.Duration, f func()) {
		wg.Go(func() {
			tick := time.NewTicker(period)
			defer tick.Stop()
			for time.Now().Before(until) {
				f()
				<-tick.C
			}
		})
	}
	every(100*time.Millisecond, func() {
		readyz.add(operatorproc.HTTPStatus(p.Health+"/readyz") == http.StatusOK)
		healthz.add(operatorproc.HTTPStatus(p.Health+"/healthz") == http.StatusOK)
	})
	every(100*time.Millisecond, func() { pods.create(cs, ns) })
	every(500*time.Millisecond, func() {
		name := fmt.Sprintf("stalled-%04d", replicaSets.Load())
		_, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, replicaSet(ns, name), metav1.CreateOptions{})
		if assert.NoError(t, err, "create replicaset %s", name) {
			replicaSets.Add(1)
		}
	})
	every(200*time.Millisecond, func() {
		if v, ok := reachableGauge(p); ok && v == 0 && gaugeZero.Load() == 0 {
			gaugeZero.Store(int64(time.Since(stalled)))
		}
	})
	wg.Wait()
	require.True(t, p.Running(), "the operator exited while cut off:\n%s", p.Output())
	proxy.resume()
	resumed := time.Now()

	labeled := waitAllLabeled(t, cs, ns, before+int(replicaSets.Load()), 60*time.Second)
	var reachableAgain time.Time
	require.Eventually(t, func() bool {
		v, ok := reachableGauge(p)
		reachableAgain = time.Now()
		return ok && v == 1
	}, 30*time.Second, 100*time.Millisecond, "operator_apiserver_reachable is 1 again")
	require.Eventually(t, func() bool { return strings.Contains(p.Output(), `"api server reachable again"`) },
		10*time.Second, 50*time.Millisecond, "the recovery is logged")

	figure(t, "apiserver-proxy-stall", stall)
	figure(t, "apiserver-proxy-readyz-200-samples", readyz.String())
	figure(t, "apiserver-proxy-healthz-200-samples", healthz.String())
	figure(t, "apiserver-proxy-pod-creates-admitted", pods.String())
	figure(t, "apiserver-proxy-replicasets-created-while-stalled", replicaSets.Load())
	figure(t, "apiserver-proxy-replicasets-labeled-after-resume", labeled.Sub(resumed))
	if d := gaugeZero.Load(); d > 0 {
		figure(t, "apiserver-proxy-gauge-0-after-stall", time.Duration(d))
	}
	figure(t, "apiserver-proxy-gauge-1-after-resume", reachableAgain.Sub(resumed))

	assert.Equal(t, readyz.total.Load(), readyz.ok.Load(), "/readyz answered 200 to every sample while the API server was out of reach")
	assert.Equal(t, healthz.total.Load(), healthz.ok.Load(), "/healthz answered 200 to every sample")
	assert.Positive(t, pods.total.Load())
	assert.Equal(t, pods.total.Load(), pods.ok.Load(), "every Pod create was admitted and mutated: %v", pods.failures())
	assert.Positive(t, replicaSets.Load())
	assert.Positive(t, gaugeZero.Load(), "operator_apiserver_reachable went to 0 while the API server was out of reach")
	out := p.Output()
	assert.Equal(t, 1, strings.Count(out, `"api server unreachable"`), "the loss is logged once, not per probe")
	assert.Equal(t, 1, strings.Count(out, `"api server reachable again"`), "the recovery is logged once")
}

// sampler counts how many of a series of probes succeeded.
type sampler struct{ ok, total atomic.Int64 }

func (s *sampler) add(ok bool) {
	s.total.Add(1)
	if ok {
		s.ok.Add(1)
	}
}

func (s *sampler) String() string { return fmt.Sprintf("%d/%d", s.ok.Load(), s.total.Load()) }

// podCreates creates Pods one at a time and counts those admitted with the
// mutating webhook's annotation.
type podCreates struct {
	sampler
	n    atomic.Int64
	mu   sync.Mutex
	errs []string
}

func (c *podCreates) create(cs kubernetes.Interface, namespace string) {
	name := fmt.Sprintf("admitted-%04d", c.n.Add(1))
	// Above the webhooks' 10 s timeout, so a webhook that hangs shows as
	// the API server's error rather than ours.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	created, err := cs.CoreV1().Pods(namespace).Create(ctx, pod(namespace, name), metav1.CreateOptions{})
	switch {
	case err != nil:
		c.fail(fmt.Sprintf("%s: %v", name, err))
	case created.Annotations[annotationKey] != "foo":
		c.fail(fmt.Sprintf("%s: annotation %q, not mutated", name, created.Annotations[annotationKey]))
	default:
		c.add(true)
	}
}

func (c *podCreates) fail(reason string) {
	c.add(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, reason)
}

func (c *podCreates) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// reachableGauge reads operator_apiserver_reachable from the operator's
// /metrics; ok is false when the scrape fails or holds no sample.
func reachableGauge(p *operatorproc.Process) (value float64, ok bool) {
	samples, err := p.Scrape("operator_apiserver_reachable")
	if err != nil || len(samples) == 0 {
		return 0, false
	}
	return samples[0].Value, true
}

// writeProxiedKubeconfig is cp's admin kubeconfig with server in place of
// the API server's address.
func writeProxiedKubeconfig(t *testing.T, cp *controlplane.ControlPlane, server string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxied"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cp.Config.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cp.Config.CertData, ClientKeyData: cp.Config.KeyData}
	kc.Contexts["admin"] = &clientcmdapi.Context{Cluster: "proxied", AuthInfo: "admin"}
	kc.CurrentContext = "admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// stallingProxy forwards TCP connections from 127.0.0.1 to target. Stalled,
// it still accepts connections but forwards no byte, in either direction,
// on them or on those it already carries, until resumed.
type stallingProxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	gate     *sync.Cond // broadcast on resume and close
	stalled  bool
	closed   bool
	conns    map[net.Conn]struct{}
	accepted int
	wg       sync.WaitGroup
}

func startStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallingProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.gate = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *stallingProxy) addr() string { return p.ln.Addr().String() }

func (p *stallingProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

func (p *stallingProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	p.gate.Broadcast()
}

func (p *stallingProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *stallingProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.gate.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// track remembers c for close; false when the proxy is closing.
func (p *stallingProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// wait blocks while stalled; false when the proxy is closing.
func (p *stallingProxy) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.stalled && !p.closed {
		p.gate.Wait()
	}
	return !p.closed
}

func (p *stallingProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			return
		}
		p.mu.Lock()
		p.accepted++
		p.mu.Unlock()
		p.wg.Go(func() {
			server, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = client.Close()
				return
			}
			if !p.track(server) {
				_ = client.Close()
				return
			}
			var pair sync.WaitGroup
			pair.Go(func() { p.pipe(server, client) })
			pair.Go(func() { p.pipe(client, server) })
			pair.Wait()
		})
	}
}

// pipe copies from src to dst, holding each chunk while stalled, and
// closes both ends when either is done.
func (p *stallingProxy) pipe(dst, src net.Conn) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF, or a closed connection
			return
		}
	}
}
