package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// The Pod webhooks' paths and the annotation they deal in.
const (
	podMutatePath   = "/mutate--v1-pod"
	podValidatePath = "/validate--v1-pod"
	podAnnotation   = "example-mutating-admission-webhook"
	// podAnnotationValue is what the mutating webhook sets it to.
	podAnnotationValue = "foo"
)

// patchSample is how often load checks a mutate answer's patch: every
// patchSample-th review's patch is applied to its Pod after the timing.
const patchSample = 50

// webhookConcurrency is the number of requests in flight at once, as a
// busy API server sends them.
const webhookConcurrency = 32

// webhook-mutate: AdmissionReviews for Pod CREATE posted straight to the
// operator's webhook server over HTTPS (keep-alive, HTTP/1.1 as the API
// server speaks to webhooks by default), so the figure is the webhook
// server alone, without the API server's admission chain.
func runWebhookMutate(ctx context.Context, e *env, bin, _ string) (result, error) {
	n := e.opts.n(20000)
	stats, echo, err := e.postReviews(ctx, bin, podMutatePath, n, func(int) map[string]string {
		return map[string]string{"team": "bench"}
	})
	if err != nil {
		return nil, err
	}
	if err := checkVerdicts("operator", stats.denied, allowAll); err != nil {
		return nil, err
	}
	if err := checkVerdicts("echo", echo.denied, allowAll); err != nil {
		return nil, err
	}
	return append(result{
		paramOf("n", n),
		durationOf("p50", percentile(stats.latencies, 50)),
		durationOf("p99", percentile(stats.latencies, 99)),
		rateOf("rate", n, stats.took),
	}, echoFigures(stats, echo)...), nil
}

// echoFigures are the echo webhook's p99 and rate, and the operator's
// against them: rate/echo above 1 and p99/echo below 1 would beat the
// machine's limit.
func echoFigures(op, echo reviewStats) []figure {
	opP99, echoP99 := percentile(op.latencies, 99), percentile(echo.latencies, 99)
	n := len(op.latencies)
	return []figure{
		durationOf("echo-p99", echoP99),
		rateOf("echo-rate", n, echo.took),
		ratioOf("rate/echo", echo.took.Seconds()/op.took.Seconds()),
		ratioOf("p99/echo", opP99.Seconds()/echoP99.Seconds()),
	}
}

// webhook-validate: the same on the validating path; every 10th Pod lacks
// the annotation and must be denied, so both verdicts are exercised (the
// echo allows them all). Each review's verdict is checked, not only how
// many were denied.
func runWebhookValidate(ctx context.Context, e *env, bin, _ string) (result, error) {
	n := e.opts.n(20000)
	stats, echo, err := e.postReviews(ctx, bin, podValidatePath, n, func(i int) map[string]string {
		if validateDenies(i) {
			return map[string]string{"team": "bench"}
		}
		return map[string]string{"team": "bench", podAnnotation: podAnnotationValue}
	})
	if err != nil {
		return nil, err
	}
	if err := checkVerdicts("operator", stats.denied, validateDenies); err != nil {
		return nil, err
	}
	if err := checkVerdicts("echo", echo.denied, allowAll); err != nil {
		return nil, err
	}
	return append(result{
		paramOf("n", n),
		durationOf("p50", percentile(stats.latencies, 50)),
		durationOf("p99", percentile(stats.latencies, 99)),
		rateOf("rate", n, stats.took),
		countOf("denied", stats.deniedCount()),
	}, echoFigures(stats, echo)...), nil
}

// validateDenies says whether the validating webhook must deny review i:
// every 10th Pod of webhook-validate lacks the annotation.
func validateDenies(i int) bool { return i%10 == 9 }

// allowAll is the verdicts of the mutating webhook, and of the echo on
// either path: every review allowed.
func allowAll(int) bool { return false }

// checkVerdicts fails naming the first review whose verdict in denied
// (indexed by review) is not the one wantDenied gives it; who names the
// webhook that answered.
func checkVerdicts(who string, denied []bool, wantDenied func(i int) bool) error {
	for i, got := range denied {
		if want := wantDenied(i); got != want {
			return fmt.Errorf("%s: review %s (%d of %d) %s, want it %s", who, reviewUID(i), i, len(denied), verdict(got), verdict(want))
		}
	}
	return nil
}

func verdict(denied bool) string {
	if denied {
		return "denied"
	}
	return "allowed"
}

// reviewUID is the uid of review i, which its answer must carry.
func reviewUID(i int) string { return fmt.Sprintf("bench-%06d", i) }

type reviewStats struct {
	latencies []time.Duration
	took      time.Duration
	// denied holds every review's verdict, by review: true for a denial.
	denied []bool
}

func (s reviewStats) deniedCount() int {
	n := 0
	for _, d := range s.denied {
		if d {
			n++
		}
	}
	return n
}

// postReviews starts an operator, encodes n reviews up front (so the
// client's JSON work is not timed), posts them (see load), stops the
// operator, and then posts the same reviews to the echo webhook on the
// same address (see serveEcho): the machine's limit for the operator's
// figures, measured beside them.
func (e *env) postReviews(ctx context.Context, bin, path string, n int, annotations func(i int) map[string]string) (op, echo reviewStats, err error) {
	bodies := make([][]byte, n)
	for i := range n {
		if bodies[i], err = podReview(reviewUID(i), annotations(i)); err != nil {
			return op, echo, err
		}
	}
	if op, err = e.reviewOperator(ctx, bin, path, bodies); err != nil {
		return op, echo, err
	}
	p, err := e.startEcho(ctx)
	if err != nil {
		return op, echo, err
	}
	defer p.stop()
	echo, err = e.load(ctx, path, bodies)
	if err != nil {
		return op, echo, fmt.Errorf("echo webhook: %w", err)
	}
	return op, echo, nil
}

// reviewOperator runs bin until it is ready and posts bodies to it.
func (e *env) reviewOperator(ctx context.Context, bin, path string, bodies [][]byte) (_ reviewStats, err error) {
	op, err := e.startOperator(bin, "webhook", "replicaset")
	if err != nil {
		return reviewStats{}, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if _, err := op.waitReady(ctx); err != nil {
		return reviewStats{}, err
	}
	return e.load(ctx, path, bodies)
}

// load warms up one connection per worker, then posts every body to the
// webhook address at webhookConcurrency and checks every answer.
func (e *env) load(ctx context.Context, path string, bodies [][]byte) (reviewStats, error) {
	n := len(bodies)
	client, err := e.webhookClient()
	if err != nil {
		return reviewStats{}, err
	}
	defer client.CloseIdleConnections()
	url := "https://" + e.webhook + path

	warm := webhookConcurrency * 4
	if err := parallel(ctx, warm, webhookConcurrency, func(ctx context.Context, i int) error {
		_, err := postReview(ctx, client, url, bodies[i%n], reviewUID(i%n))
		return err
	}); err != nil {
		return reviewStats{}, fmt.Errorf("warm up %s: %w", path, err)
	}

	// uids are made before the timing, and every worker writes only its
	// reviews' slots of the preallocated slices, so keeping each verdict
	// costs the timed loop one store.
	uids := make([]string, n)
	for i := range uids {
		uids[i] = reviewUID(i)
	}
	stats := reviewStats{latencies: make([]time.Duration, n), denied: make([]bool, n)}
	patches := make([][]byte, n) // the sampled mutate answers' patches
	began := time.Now()
	err = parallel(ctx, n, webhookConcurrency, func(ctx context.Context, i int) error {
		start := time.Now()
		resp, err := postReview(ctx, client, url, bodies[i], uids[i])
		stats.latencies[i] = time.Since(start)
		if err != nil {
			return err
		}
		stats.denied[i] = !resp.Allowed
		if resp.Allowed && path == podMutatePath {
			if len(resp.Patch) == 0 || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
				return fmt.Errorf("review %d: allowed without a JSON patch", i)
			}
			if i%patchSample == 0 {
				patches[i] = resp.Patch
			}
		}
		return nil
	})
	stats.took = time.Since(began)
	if err != nil {
		return stats, err
	}
	for i, patch := range patches {
		if patch == nil {
			continue
		}
		if err := checkPatch(bodies[i], patch); err != nil {
			return stats, fmt.Errorf("review %d: %w", i, err)
		}
	}
	return stats, nil
}

// checkPatch applies a mutate answer's JSON patch to the Pod of the review
// in body and checks the result: the annotation added with value foo,
// every other annotation kept, nothing else changed.
func checkPatch(body, patch []byte) error {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return fmt.Errorf("decode review: %w", err)
	}
	raw := review.Request.Object.Raw
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return fmt.Errorf("decode patch %s: %w", patch, err)
	}
	patched, err := p.Apply(raw)
	if err != nil {
		return fmt.Errorf("apply patch %s: %w", patch, err)
	}
	var before, after corev1.Pod
	if err := json.Unmarshal(raw, &before); err != nil {
		return fmt.Errorf("decode pod: %w", err)
	}
	if err := json.Unmarshal(patched, &after); err != nil {
		return fmt.Errorf("decode patched pod: %w", err)
	}
	want := maps.Clone(before.Annotations)
	if want == nil {
		want = map[string]string{}
	}
	want[podAnnotation] = podAnnotationValue
	if !maps.Equal(want, after.Annotations) {
		return fmt.Errorf("patch %s: annotations %v, want %v", patch, after.Annotations, want)
	}
	after.Annotations = before.Annotations
	if !equality.Semantic.DeepEqual(before, after) {
		return fmt.Errorf("patch %s changes more than the annotations", patch)
	}
	return nil
}

// webhookClient is a keep-alive HTTPS client that trusts the CA that
// signed the operator's serving certificate.
func (e *env) webhookClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(e.ca) {
		return nil, errors.New("parse the control plane CA")
	}
	return &http.Client{
		Timeout: 10 * time.Second, // the webhook configurations' timeoutSeconds
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConns:        webhookConcurrency,
			MaxIdleConnsPerHost: webhookConcurrency,
			MaxConnsPerHost:     webhookConcurrency,
			IdleConnTimeout:     time.Minute,
		},
	}, nil
}

// postReview sends one review and returns its response, failing on a
// non-200 answer or a response for another request.
func postReview(ctx context.Context, client *http.Client, url string, body []byte, uid string) (*admissionv1.AdmissionResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post review %s: %w", uid, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read review %s: %w", uid, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("post review %s: %s: %s", uid, resp.Status, bytes.TrimSpace(data))
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, fmt.Errorf("decode review %s: %w", uid, err)
	}
	if review.Response == nil || string(review.Response.UID) != uid {
		return nil, fmt.Errorf("review %s: answered for another request: %s", uid, data)
	}
	return review.Response, nil
}

// podReview is the AdmissionReview the API server sends for a Pod CREATE.
func podReview(uid string, annotations map[string]string) ([]byte, error) {
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "pod-" + uid, Labels: map[string]string{"app": "bench"}, Annotations: annotations},
		Spec:       podSpec(),
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("encode pod: %w", err)
	}
	podKind := metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podResource := metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             types.UID(uid),
			Kind:            podKind,
			Resource:        podResource,
			RequestKind:     &podKind,
			RequestResource: &podResource,
			Name:            pod.Name,
			Namespace:       pod.Namespace,
			Operation:       admissionv1.Create,
			UserInfo:        authenticationv1.UserInfo{Username: "bench"},
			Object:          runtime.RawExtension{Raw: raw},
			Options:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}`)},
		},
	}
	data, err := json.Marshal(review)
	if err != nil {
		return nil, fmt.Errorf("encode review: %w", err)
	}
	return data, nil
}
