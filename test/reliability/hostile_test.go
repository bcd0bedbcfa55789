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
// operator must stay alive and under a quarter of the Deployment's 512 MiB
// memory limit, and answer every real review, quickly.
//
// The hostile clients come from three loopback addresses other than the
// reviews' 127.0.0.1 (on Linux all of 127/8 is loopback), none opening more
// connections than an address's share, so that the whole budget is under
// pressure; TestHostileAddressDoesNotStarveTheAPIServer floods from one.
//
// Not parallel: memory and latency are measured on a machine the test does
// not share with the other reliability tests.
func TestHostileWebhookBodies(t *testing.T) {
	const (
		window    = 20 * time.Second
		holders   = 60
		tricklers = 300
		maxBody   = webhook.DefaultMaxRequestBytes
		rssLimit  = 128 << 20
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
		wg.Go(func() { hostile.trickle(op.Webhook, from, tlsConfig, maxBody, end, false) })
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
// port from one address, 127.0.0.2, with 600 connections that each declare
// a 1 MiB body and send a byte of it a second (a refused one dials again),
// while Pods are created through the real API server, which calls the
// webhooks from 127.0.0.1. Before the webhook server held each address to a
// share of its budget, the flood took every request slot and the API
// server's calls were all refused with 429; the Pod webhooks fail closed,
// so no Pod could be created. Now every Pod must be admitted and mutated,
// no call of the API server refused, and the p99 of a Pod create stay near
// the one measured before the flood.
//
// Not parallel: latencies are measured on a machine the test does not
// share with the other reliability tests.
func TestHostileAddressDoesNotStarveTheAPIServer(t *testing.T) {
	const (
		ns       = "flood"
		flooders = 600
		bodySize = 1 << 20
		// What one address may hold: half of the request slots.
		share = webhook.DefaultMaxRequestsInFlight / 2
		// Each phase creates Pods from two workers, one every 50 ms each,
		// as a busy cluster's controllers would.
		phase    = 10 * time.Second
		workers  = 2
		interval = 50 * time.Millisecond
		// The flood outlasts the measured phase and the time it takes to
		// connect, but not the server's 30 s read timeout, which would
		// end its connections in the middle of the phase.
		window = phase + 12*time.Second
		// 5x the highest p99 of Pod creates under the flood in the runs
		// docs/reliability.md tabulates; before the share, the flood made
		// every one fail.
		p99Limit = 480 * time.Millisecond
	)
	cp := controlplane.StartT(t, controlplane.Options{})
	op := operatorproc.RunAgainst(t, releaseBin, cp, "--controllers=replicaset")
	ctx := context.Background()
	cs := cp.Clientset()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	_, err = cp.InstallWebhooks(ctx, filepath.Join(root, "config", "webhook"), controlplane.WebhookServer{Host: op.Webhook, CABundle: cp.CACert()})
	require.NoError(t, err)
	waitForPodWebhooks(t, cs, ns)

	unloaded := createPodsFor(cs, ns, "unloaded", workers, interval, phase)
	callsBefore, refusedBefore := apiserverWebhookCalls(t, cs)

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(cp.CACert()))
	tlsConfig := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	end := time.Now().Add(window)
	flood := &hostileStats{}
	var wg sync.WaitGroup
	for range flooders {
		wg.Go(func() { flood.trickle(op.Webhook, "127.0.0.2", tlsConfig, bodySize, end, true) })
	}
	// The measurement starts once the flood holds all it may.
	inFlight := func() float64 {
		s, err := op.Scrape("controller_runtime_webhook_requests_in_flight")
		if err != nil {
			return -1
		}
		return s.Sum("controller_runtime_webhook_requests_in_flight", nil)
	}
	require.Eventually(t, func() bool { return inFlight() >= share }, 10*time.Second, 50*time.Millisecond, "the flood holds its address's share of request slots")
	flooded := createPodsFor(cs, ns, "flooded", workers, interval, phase)
	heldAtEnd := inFlight()
	require.True(t, time.Now().Before(end), "the flood lasted the whole phase")
	wg.Wait()

	callsAfter, refusedAfter := apiserverWebhookCalls(t, cs)
	require.True(t, op.Running(), "the operator exited under the flood:\n%s", op.Output())
	samples, err := op.Scrape("operator_webhook_requests_rejected_total", "operator_webhook_connections_rejected_total", "controller_runtime_webhook_requests_total")
	require.NoError(t, err)

	unloadedLat, floodedLat := unloaded.latencies(), flooded.latencies()
	p99 := percentile(floodedLat, 0.99)
	figure(t, "flood-pod-creates-unloaded", len(unloadedLat))
	figure(t, "flood-pod-create-unloaded-p50", percentile(unloadedLat, 0.50))
	figure(t, "flood-pod-create-unloaded-p99", percentile(unloadedLat, 0.99))
	figure(t, "flood-pod-create-unloaded-max", percentile(unloadedLat, 1))
	figure(t, "flood-pod-creates-flooded", len(floodedLat))
	figure(t, "flood-pod-create-flooded-p50", percentile(floodedLat, 0.50))
	figure(t, "flood-pod-create-flooded-p99", p99)
	figure(t, "flood-pod-create-flooded-max", percentile(floodedLat, 1))
	figure(t, "flood-pod-creates-failed", unloaded.failed.Load()+flooded.failed.Load())
	figure(t, "flood-apiserver-webhook-calls-flooded", callsAfter-callsBefore)
	figure(t, "flood-apiserver-webhook-calls-refused", refusedAfter-refusedBefore)
	figure(t, "flood-connections-held", flood.tricklersConnected.Load())
	figure(t, "flood-requests-in-flight-at-end", heldAtEnd)
	figure(t, "flood-connections-reset", samples.Sum("operator_webhook_connections_rejected_total", nil))
	figure(t, "flood-dials-refused", flood.tricklersRefused.Load())
	figure(t, "flood-answered-429", samples.Sum("controller_runtime_webhook_requests_total", map[string]string{"code": "429"}))

	assert.Zero(t, unloaded.failed.Load(), "Pod creates before the flood: %v", unloaded.firstError())
	assert.Zero(t, flooded.failed.Load(), "Pod creates under the flood: %v", flooded.firstError())
	assert.GreaterOrEqual(t, len(floodedLat), 100, "Pod creates under the flood")
	assert.Positive(t, callsAfter-callsBefore, "the API server called the webhooks under the flood")
	assert.Zero(t, refusedAfter-refusedBefore, "the API server's webhook calls that failed under the flood")
	// The flood is never answered with 429: what is past its share is
	// reset at accept. So any 429 went to the API server, even one its
	// retry made good.
	assert.Zero(t, samples.Sum("controller_runtime_webhook_requests_total", map[string]string{"code": "429"}), "requests refused with 429")
	assert.Zero(t, samples.Sum("operator_webhook_requests_rejected_total", nil), "requests refused by the budget")
	assert.GreaterOrEqual(t, heldAtEnd, float64(share), "the flood held its share to the end of the phase")
	assert.Equal(t, int64(share), flood.tricklersConnected.Load(), "flood connections held")
	assert.Positive(t, samples.Sum("operator_webhook_connections_rejected_total", nil), "flood connections reset")
	assert.Less(t, p99, p99Limit, "p99 of Pod creates under the flood")
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

// apiserverWebhookCalls reads from the API server's own metrics how many
// webhook calls it made and how many of them did not end in 200.
func apiserverWebhookCalls(t *testing.T, cs kubernetes.Interface) (calls, failed float64) {
	t.Helper()
	const name = "apiserver_admission_webhook_request_total"
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	require.NoError(t, err, "scrape the API server")
	s, err := operatorproc.ParseMetrics(bytes.NewReader(raw), name)
	require.NoError(t, err)
	calls = s.Sum(name, nil)
	return calls, calls - s.Sum(name, map[string]string{"code": "200"})
}

// hostileStats counts what the hostile clients got done.
type hostileStats struct {
	holdersConnected   atomic.Int64
	holderBytes        atomic.Int64
	holders429         atomic.Int64
	tricklersConnected atomic.Int64
	tricklersCut       atomic.Int64
	tricklersRefused   atomic.Int64 // connections refused, each retry counted
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
// until the window ends or the server closes the connection. A connection
// the server refuses is dialled again every second when redial is
// set, as an attacker would.
func (h *hostileStats) trickle(addr, from string, config *tls.Config, size int64, end time.Time, redial bool) {
	conn, err := dialHostile(addr, from, config, end)
	for err != nil && redial && time.Until(end) > time.Second {
		h.tricklersRefused.Add(1)
		time.Sleep(time.Second)
		conn, err = dialHostile(addr, from, config, end)
	}
	if err != nil {
		h.tricklersRefused.Add(1)
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
