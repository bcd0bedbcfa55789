package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// TestHostileWebhookBodies points hostile clients at the operator's webhook
// port for twenty seconds: 60 connections that send all but the last byte
// of a body of the largest size served and then hold the connection, and
// 300 that declare that size and trickle a byte a second. Meanwhile a
// client sends real Pod AdmissionReviews, as the API server would. The
// operator must stay alive and under a third of the Deployment's 512 MiB
// memory limit, and answer every real review, quickly.
//
// The hostile clients come from three loopback addresses other than the
// reviews' 127.0.0.1 (on Linux all of 127/8 is loopback). The holders'
// address is the only one with large bodies, so its fair share is all of
// what large bodies may fill: the whole body budget is under pressure.
// TestHostileAddressDoesNotStarveTheAPIServer floods from several.
//
// Not parallel: memory and latency are measured on a machine the test does
// not share with the other reliability tests.
func TestHostileWebhookBodies(t *testing.T) {
	const (
		window    = 20 * time.Second
		holders   = 60
		tricklers = 300
		maxBody   = webhook.DefaultMaxRequestBytes
		// What a full body budget costs, which one address may now fill
		// alone; docs/reliability.md has the figures.
		rssLimit = 160 << 20
		// Not within 5x of the p99 docs/reliability.md reports (measured
		// alone): make test runs this beside other packages with the race
		// detector, which slows a request several times. It still fails
		// the p99 of the code before the body budget, reported there too.
		p99Limit = 100 * time.Millisecond
		// Real reviews are paced like a busy API server's calls rather
		// than sent back to back: the test is about being served while
		// hostile clients hold connections, not about throughput.
		reviewWorkers  = 2
		reviewInterval = 50 * time.Millisecond
	)
	cp := controlplane.StartT(t, controlplane.Options{})
	op := operatorproc.RunAgainst(t, releaseBin, cp, "--controllers=replicaset")
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(cp.CACert()))
	tlsConfig := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}

	rss := startRSSSampler(t, op.Pid(), window+10*time.Second)
	began := time.Now()
	end := began.Add(window)

	var wg sync.WaitGroup
	hostile := &hostileStats{}
	for range holders {
		wg.Go(func() { hostile.hold(op.Webhook, "127.0.0.2", tlsConfig, maxBody, end) })
	}
	for i := range tricklers {
		from := []string{"127.0.0.3", "127.0.0.4"}[i%2]
		wg.Go(func() { hostile.trickle(op.Webhook, from, tlsConfig, maxBody, end) })
	}
	reviews := &reviewStats{}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     tlsConfig,
			MaxIdleConnsPerHost: reviewWorkers,
			ForceAttemptHTTP2:   false,
		},
	}
	defer client.CloseIdleConnections()
	for w := range reviewWorkers {
		wg.Go(func() { reviews.send(client, "https://"+op.Webhook+app.PodMutatePath, w, reviewInterval, end) })
	}
	// Every goroutine returns by the end of the window: reads and writes of
	// the hostile connections have it as their deadline, and the review
	// workers start none after it.
	wg.Wait()
	client.CloseIdleConnections()
	finished := time.Since(began)

	require.True(t, op.Running(), "the operator exited under hostile load:\n%s", op.Output())
	assert.Equal(t, http.StatusOK, operatorproc.HTTPStatus(op.Health+"/healthz"))
	// Every hostile connection is closed: what they reserved goes back.
	assert.Eventually(t, func() bool {
		s, err := op.Scrape("operator_webhook_body_bytes_in_flight")
		return err == nil && s.Sum("operator_webhook_body_bytes_in_flight", nil) == 0
	}, 10*time.Second, 100*time.Millisecond, "body bytes in flight back to zero")
	samples, err := op.Scrape("operator_webhook_requests_rejected_total", "controller_runtime_webhook_requests_total")
	require.NoError(t, err)
	peak := rss.stop()

	lat := reviews.latencies()
	p99 := percentile(lat, 0.99)
	figure(t, "hostile-window", finished)
	figure(t, "hostile-rss-before-mib", fmt.Sprintf("%.1f", float64(rss.first)/(1<<20)))
	figure(t, "hostile-peak-rss-mib", fmt.Sprintf("%.1f", float64(peak)/(1<<20)))
	figure(t, "hostile-rss-samples", rss.count())
	figure(t, "hostile-reviews-answered", len(lat))
	figure(t, "hostile-reviews-failed", reviews.failed.Load())
	figure(t, "hostile-review-p50", percentile(lat, 0.50))
	figure(t, "hostile-review-p99", p99)
	figure(t, "hostile-review-max", percentile(lat, 1))
	figure(t, "hostile-holders-connected", hostile.holdersConnected.Load())
	figure(t, "hostile-holder-mib-sent", hostile.holderBytes.Load()>>20)
	figure(t, "hostile-holders-answered-429", hostile.holders429.Load())
	figure(t, "hostile-tricklers-connected", hostile.tricklersConnected.Load())
	figure(t, "hostile-tricklers-cut-off", hostile.tricklersCut.Load())
	figure(t, "hostile-rejected", samples.Sum("operator_webhook_requests_rejected_total", nil))
	figure(t, "hostile-rejected-429", samples.Sum("controller_runtime_webhook_requests_total", map[string]string{"code": "429"}))

	assert.Less(t, peak, int64(rssLimit), "operator RSS")
	assert.Zero(t, reviews.failed.Load(), "real reviews not answered with an allowed patch: %v", reviews.firstError())
	assert.GreaterOrEqual(t, len(lat), 100, "real reviews answered")
	assert.Less(t, p99, p99Limit, "p99 of real reviews")
	assert.Equal(t, int64(holders), hostile.holdersConnected.Load(), "hostile holders connected")
	assert.Equal(t, int64(tricklers), hostile.tricklersConnected.Load(), "hostile tricklers connected")
}

// TestHostileAddressDoesNotStarveTheAPIServer floods the operator's webhook
// port from 1, 2 and 8 addresses (127.0.0.2 and up; on Linux all of 127/8
// is loopback), each with as many connections as it can hold: every one
// declares a 1 MiB body and sends a byte of it a second, and one that is
// refused, given up or cut dials again a second later. Once the flood
// holds every request slot, the Pod webhooks of the real API server, which
// calls them from 127.0.0.1, are pointed at that operator, so that the API
// server's first connections and every call find the server full, and
// Pods are created for 10 s. With each address held to a fixed half of
// the slots, two addresses took them all and every call of the API server
// was refused with 429; the Pod webhooks fail closed, so no Pod could be
// created. Now the API server, below its fair share, must be served in
// place of the flood's slowest requests: at least 99 % of Pods admitted
// and mutated, none of its calls refused with 429, and the p99 of a Pod
// create under 250 ms, while the flood is refused and given up.
//
// Not parallel: latencies are measured on a machine the test does not
// share with the other reliability tests.
func TestHostileAddressDoesNotStarveTheAPIServer(t *testing.T) {
	const (
		ns       = "flood"
		bodySize = 1 << 20
		slots    = webhook.DefaultMaxRequestsInFlight
		// Each phase creates Pods from two workers, one every 50 ms each,
		// as a busy cluster's controllers would.
		phase    = 10 * time.Second
		workers  = 2
		interval = 50 * time.Millisecond
		p99Limit = 250 * time.Millisecond
		// The share of Pod creates that must be admitted under the flood.
		minAdmitted = 0.99
	)
	cp := controlplane.StartT(t, controlplane.Options{})
	ctx := context.Background()
	cs := cp.Clientset()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	// pointWebhooksAt waits until the API server calls op's webhooks: a
	// Pod admitted, or refused by a call to op (so that a server that
	// refuses the API server fails on the figures, not here).
	pointWebhooksAt := func(t *testing.T, op *operatorproc.Process) {
		t.Helper()
		_, err := cp.InstallWebhooks(ctx, filepath.Join(root, "config", "webhook"), controlplane.WebhookServer{Host: op.Webhook, CABundle: cp.CACert()})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := cs.CoreV1().Pods(ns).Create(ctx, pod(ns, "probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return strings.Contains(err.Error(), op.Webhook)
			}
			return got.Annotations[annotationKey] == "foo"
		}, 30*time.Second, 50*time.Millisecond, "the API server calls the Pod webhooks at %s", op.Webhook)
	}
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(cp.CACert()))
	tlsConfig := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}

	// The baseline, on an operator of its own that nothing floods.
	base := operatorproc.RunAgainst(t, releaseBin, cp, "--controllers=replicaset")
	pointWebhooksAt(t, base)
	unloaded := createPodsFor(cs, ns, "unloaded", workers, interval, phase)
	require.NoError(t, base.Kill())
	unloadedLat := unloaded.latencies()
	figure(t, "flood-pod-creates-unloaded", len(unloadedLat))
	figure(t, "flood-pod-creates-unloaded-failed", unloaded.failed.Load())
	figure(t, "flood-pod-create-unloaded-p50", percentile(unloadedLat, 0.50))
	figure(t, "flood-pod-create-unloaded-p99", percentile(unloadedLat, 0.99))
	figure(t, "flood-pod-create-unloaded-max", percentile(unloadedLat, 1))
	assert.Zero(t, unloaded.failed.Load(), "Pod creates before the flood: %v", unloaded.firstError())

	tests := []struct {
		addresses int
		connsEach int // more than the addresses together may hold
	}{
		{addresses: 1, connsEach: 600},
		{addresses: 2, connsEach: 400},
		{addresses: 8, connsEach: 400},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d addresses", tt.addresses), func(t *testing.T) {
			op := operatorproc.RunAgainst(t, releaseBin, cp, "--controllers=replicaset")
			name := func(what string) string { return fmt.Sprintf("flood-%daddr-%s", tt.addresses, what) }

			floodCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
			flood := &floodStats{}
			var wg sync.WaitGroup
			stopFlood := sync.OnceFunc(func() {
				stop()
				wg.Wait()
			})
			t.Cleanup(stopFlood)
			// The flood's dials cost this machine too: it offers the
			// cheapest key share, as an attacker would.
			floodTLS := tlsConfig.Clone()
			floodTLS.CurvePreferences = []tls.CurveID{tls.X25519}
			for a := range tt.addresses {
				from := fmt.Sprintf("127.0.0.%d", 2+a)
				for range tt.connsEach {
					wg.Go(func() { flood.hold(floodCtx, op.Webhook, from, floodTLS, bodySize) })
				}
			}
			inFlight := func() float64 {
				s, err := op.Scrape("controller_runtime_webhook_requests_in_flight")
				if err != nil {
					return -1
				}
				return s.Sum("controller_runtime_webhook_requests_in_flight", nil)
			}
			require.Eventually(t, func() bool { return inFlight() >= slots }, time.Minute, 50*time.Millisecond, "the flood holds every request slot")

			// The operator's counts from here include the API server's
			// first connections, which find the server full.
			before := scrapeBudget(t, op)
			pointWebhooksAt(t, op)
			callsBefore := apiserverWebhookCalls(t, cs)
			flooded := createPodsFor(cs, ns, fmt.Sprintf("flooded-%d", tt.addresses), workers, interval, phase)
			heldAtEnd := inFlight()
			require.NoError(t, floodCtx.Err(), "the flood lasted the whole phase")
			callsAfter := apiserverWebhookCalls(t, cs)
			after := scrapeBudget(t, op)
			stopFlood()
			require.True(t, op.Running(), "the operator exited under the flood:\n%s", op.Output())

			lat := flooded.latencies()
			failed := flooded.failed.Load()
			p99 := percentile(lat, 0.99)
			calls := callsAfter.Sum(apiserverWebhookRequests, nil) - callsBefore.Sum(apiserverWebhookRequests, nil)
			callsOK := callsAfter.Sum(apiserverWebhookRequests, map[string]string{"code": "200"}) - callsBefore.Sum(apiserverWebhookRequests, map[string]string{"code": "200"})
			calls429 := callsAfter.Sum(apiserverWebhookRequests, map[string]string{"code": "429"}) - callsBefore.Sum(apiserverWebhookRequests, map[string]string{"code": "429"})
			delta := func(metric string, labels map[string]string) float64 {
				return after.Sum(metric, labels) - before.Sum(metric, labels)
			}
			evictedRequests := delta("operator_webhook_requests_evicted_total", nil)
			answered429 := delta("controller_runtime_webhook_requests_total", map[string]string{"code": "429"})
			rejected := delta("operator_webhook_requests_rejected_total", nil)

			figure(t, name("pod-creates-admitted"), len(lat))
			figure(t, name("pod-creates-failed"), failed)
			figure(t, name("pod-create-p50"), percentile(lat, 0.50))
			figure(t, name("pod-create-p99"), p99)
			figure(t, name("pod-create-max"), percentile(lat, 1))
			figure(t, name("apiserver-webhook-calls"), calls)
			figure(t, name("apiserver-webhook-calls-failed"), calls-callsOK)
			figure(t, name("apiserver-webhook-calls-429"), calls429)
			figure(t, name("requests-in-flight-at-end"), heldAtEnd)
			figure(t, name("answered-429"), answered429)
			figure(t, name("requests-rejected"), rejected)
			figure(t, name("requests-evicted"), evictedRequests)
			figure(t, name("connections-evicted-for-requests"), delta("operator_webhook_connections_evicted_total", map[string]string{"resource": "requests"}))
			figure(t, name("connections-evicted-for-connections"), delta("operator_webhook_connections_evicted_total", map[string]string{"resource": "connections"}))
			for _, reason := range []string{"client_connections", "connections"} {
				figure(t, name("connections-reset-"+reason), delta("operator_webhook_connections_rejected_total", map[string]string{"reason": reason}))
			}
			figure(t, name("flood-dials"), flood.dials.Load())
			figure(t, name("flood-connected"), flood.connected.Load())
			figure(t, name("flood-held-at-most"), flood.mostHeld.Load())

			total := len(lat) + int(failed)
			assert.GreaterOrEqual(t, total, 100, "Pod creates under the flood")
			assert.GreaterOrEqual(t, float64(len(lat)), minAdmitted*float64(total), "Pod creates admitted under the flood: %v", flooded.firstError())
			assert.LessOrEqual(t, p99, p99Limit, "p99 of Pod creates under the flood")
			assert.Positive(t, calls, "the API server called the webhooks under the flood")
			assert.Zero(t, calls429, "the API server's webhook calls refused with 429")
			assert.GreaterOrEqual(t, callsOK, minAdmitted*calls, "the API server's webhook calls answered")
			// The server stayed full, so what the API server got it took
			// from the flood, which was refused and given up meanwhile.
			assert.GreaterOrEqual(t, heldAtEnd, 0.9*slots, "the flood held nearly every request slot to the end")
			assert.Positive(t, evictedRequests, "flood requests given up for the API server")
			assert.Positive(t, rejected+delta("operator_webhook_connections_rejected_total", nil), "flood requests or connections refused")
			// Once the flood is gone, each 429 the operator answered was a
			// refusal or a request given up.
			assert.EventuallyWithT(t, func(c *assert.CollectT) {
				s, err := op.Scrape("operator_webhook_requests_rejected_total", "operator_webhook_requests_evicted_total", "controller_runtime_webhook_requests_total")
				require.NoError(c, err)
				assert.Equal(c, s.Sum("operator_webhook_requests_rejected_total", nil)+s.Sum("operator_webhook_requests_evicted_total", nil),
					s.Sum("controller_runtime_webhook_requests_total", map[string]string{"code": "429"}))
			}, 10*time.Second, 100*time.Millisecond, "every 429 is a refusal or a request given up")
		})
	}
}

const apiserverWebhookRequests = "apiserver_admission_webhook_request_total"

// apiserverWebhookCalls reads the API server's own count of its webhook
// calls, by code.
func apiserverWebhookCalls(t *testing.T, cs kubernetes.Interface) operatorproc.Samples {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	require.NoError(t, err, "scrape the API server")
	s, err := operatorproc.ParseMetrics(bytes.NewReader(raw), apiserverWebhookRequests)
	require.NoError(t, err)
	return s
}

// scrapeBudget reads the operator's counts of what its webhook budget
// refused and gave up.
func scrapeBudget(t *testing.T, op *operatorproc.Process) operatorproc.Samples {
	t.Helper()
	s, err := op.Scrape("operator_webhook_requests_rejected_total", "operator_webhook_requests_evicted_total",
		"operator_webhook_connections_rejected_total", "operator_webhook_connections_evicted_total", "controller_runtime_webhook_requests_total")
	require.NoError(t, err)
	return s
}

// floodStats counts what a flood got done.
type floodStats struct {
	dials     atomic.Int64 // connections tried
	connected atomic.Int64 // past their TLS handshake
	held      atomic.Int64 // open now
	mostHeld  atomic.Int64
}

// hold keeps one slow connection from the loopback address from open for
// as long as ctx lasts: it declares a body of size bytes and sends a byte
// of it a second. Whenever the server refuses, resets or ends the
// connection, it dials again a second later, as an attacker would.
func (s *floodStats) hold(ctx context.Context, addr, from string, config *tls.Config, size int64) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}, Config: config}
	for ctx.Err() == nil {
		s.dials.Add(1)
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			s.connected.Add(1)
			s.trickle(ctx, c.(*tls.Conn), addr, size)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// trickle sends the head and then a byte a second on conn until it fails
// or ctx ends, and closes it.
func (s *floodStats) trickle(ctx context.Context, conn *tls.Conn, addr string, size int64) {
	defer func() { _ = conn.Close() }()
	// A write blocked on a full window ends with ctx too.
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })()
	now := s.held.Add(1)
	defer s.held.Add(-1)
	for {
		most := s.mostHeld.Load()
		if now <= most || s.mostHeld.CompareAndSwap(most, now) {
			break
		}
	}
	if _, err := conn.Write(hostileHeader(addr, size)); err != nil {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := conn.Write([]byte("x")); err != nil {
			return
		}
	}
}

// createPodsFor creates Pods in namespace from workers goroutines, each
// one every interval, for d, and records how long each create took; a
// create that fails, or whose Pod lacks the mutating webhook's annotation,
// is a failure.
func createPodsFor(cs kubernetes.Interface, namespace, prefix string, workers int, interval, d time.Duration) *reviewStats {
	stats := &reviewStats{}
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for i := 0; time.Now().Before(end); i++ {
				name := fmt.Sprintf("%s-%d-%05d", prefix, w, i)
				// Above the webhooks' 10 s timeout, so that a webhook that
				// hangs shows as the API server's error.
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				start := time.Now()
				created, err := cs.CoreV1().Pods(namespace).Create(ctx, pod(namespace, name), metav1.CreateOptions{})
				took := time.Since(start)
				cancel()
				switch {
				case err != nil:
					stats.fail(fmt.Errorf("create pod %s: %w", name, err))
				case created.Annotations[annotationKey] != "foo":
					stats.fail(fmt.Errorf("pod %s: annotation %q, not mutated", name, created.Annotations[annotationKey]))
				default:
					stats.mu.Lock()
					stats.lat = append(stats.lat, took)
					stats.mu.Unlock()
				}
				<-tick.C
			}
		})
	}
	wg.Wait()
	return stats
}

// hostileStats counts what the hostile clients got done.
type hostileStats struct {
	holdersConnected   atomic.Int64
	holderBytes        atomic.Int64
	holders429         atomic.Int64
	tricklersConnected atomic.Int64
	tricklersCut       atomic.Int64
}

// hostileHeader is the head of a POST to the Pod mutator declaring length
// bytes of JSON.
func hostileHeader(addr string, length int64) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", app.PodMutatePath, addr, length)
}

// dialHostile connects to addr from the loopback address from.
func dialHostile(addr, from string, config *tls.Config, end time.Time) (*tls.Conn, error) {
	local := &net.TCPAddr{IP: net.ParseIP(from)}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second, LocalAddr: local}, Config: config}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial webhook %s: %w", addr, err)
	}
	conn := c.(*tls.Conn)
	// Nothing this connection does outlasts the window.
	if err := conn.SetDeadline(end); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("set deadline: %w", err)
	}
	return conn, nil
}

// hold sends all but the last byte of a body of size bytes and then waits,
// until the window ends, for an answer that cannot come unless the server
// refuses the request.
func (h *hostileStats) hold(addr, from string, config *tls.Config, size int64, end time.Time) {
	conn, err := dialHostile(addr, from, config, end)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	h.holdersConnected.Add(1)
	if _, err := conn.Write(hostileHeader(addr, size)); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := size - 1; left > 0; {
		n, err := conn.Write(chunk[:min(int64(len(chunk)), left)])
		h.holderBytes.Add(int64(n))
		left -= int64(n)
		if err != nil {
			break // the server refused the request and closed, or the window ended
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		h.holders429.Add(1)
	}
}

// trickle declares a body of size bytes and sends one byte of it a second
// until the window ends or the server closes the connection.
func (h *hostileStats) trickle(addr, from string, config *tls.Config, size int64, end time.Time) {
	conn, err := dialHostile(addr, from, config, end)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	h.tricklersConnected.Add(1)
	if _, err := conn.Write(hostileHeader(addr, size)); err != nil {
		h.tricklersCut.Add(1)
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for range int(time.Until(end)/time.Second) + 1 {
		<-tick.C
		if !time.Now().Before(end) {
			return
		}
		if _, err := conn.Write([]byte("x")); err != nil {
			h.tricklersCut.Add(1)
			return
		}
	}
}

// reviewStats records the real reviews: latencies of those answered with
// an allowed patch, and the rest as failures.
type reviewStats struct {
	mu     sync.Mutex
	lat    []time.Duration
	errs   []error
	failed atomic.Int64
}

func (s *reviewStats) send(client *http.Client, url string, worker int, interval time.Duration, end time.Time) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range int(time.Until(end)/interval) + 1 {
		if !time.Now().Before(end) {
			return
		}
		body, err := podMutateReview(fmt.Sprintf("hostile-%d-%05d", worker, i))
		if err == nil {
			start := time.Now()
			err = postReview(client, url, body)
			if err == nil {
				s.mu.Lock()
				s.lat = append(s.lat, time.Since(start))
				s.mu.Unlock()
			}
		}
		if err != nil {
			s.fail(err)
		}
		<-tick.C
	}
}

func (s *reviewStats) fail(err error) {
	s.failed.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *reviewStats) latencies() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.lat)
	slices.Sort(out)
	return out
}

func (s *reviewStats) firstError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		return nil
	}
	return s.errs[0]
}

// postReview sends one review and checks that the Pod is allowed with a
// patch.
func postReview(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post review: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read review answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("review answered %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return fmt.Errorf("decode review answer: %w", err)
	}
	if r := review.Response; r == nil || !r.Allowed || len(r.Patch) == 0 {
		return fmt.Errorf("review answer is not an allowed patch: %s", data)
	}
	return nil
}

// podMutateReview is the AdmissionReview the API server sends the Pod
// mutator for a new Pod.
func podMutateReview(uid string) ([]byte, error) {
	p := pod("hostile", uid)
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	obj, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode pod: %w", err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(uid),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: "hostile",
			Name:      uid,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: obj},
		},
	}
	b, err := json.Marshal(review)
	if err != nil {
		return nil, fmt.Errorf("encode review: %w", err)
	}
	return b, nil
}

// percentile is the q-quantile of sorted latencies (nearest rank), 0 when
// there are none.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// rssSampler reads a process's resident set size from /proc every 50 ms
// and keeps the peak.
type rssSampler struct {
	first int64 // before the first tick
	done  chan struct{}
	ended chan struct{}
	peak  atomic.Int64
	n     atomic.Int64
}

func startRSSSampler(t *testing.T, pid int, bound time.Duration) *rssSampler {
	t.Helper()
	const interval = 50 * time.Millisecond
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	first, err := readRSS(path)
	require.NoError(t, err)
	s := &rssSampler{first: first, done: make(chan struct{}), ended: make(chan struct{})}
	s.peak.Store(first)
	go func() {
		defer close(s.ended)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for range int(bound / interval) {
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
			v, err := readRSS(path)
			if err != nil {
				return // the process is gone; the test says so
			}
			s.n.Add(1)
			if v > s.peak.Load() {
				s.peak.Store(v)
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop ends the sampling and returns the peak in bytes.
func (s *rssSampler) stop() int64 {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	<-s.ended
	return s.peak.Load()
}

func (s *rssSampler) count() int64 { return s.n.Load() }

// readRSS reads VmRSS from a /proc/<pid>/status file, in bytes.
func readRSS(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse VmRSS in %s: %w", path, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmRSS in %s", path)
}
