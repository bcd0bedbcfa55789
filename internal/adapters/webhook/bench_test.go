package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
)

// benchConcurrency is the number of clients sending at once, as a busy API
// server does.
const benchConcurrency = 32

// BenchmarkMutate: admission round trips over HTTPS (keep-alive, HTTP/1.1)
// on the mutating path, which decodes, runs the rule, diffs and patches.
func BenchmarkMutate(b *testing.B) {
	f := startFixture(b, podHooks(), nil)
	body := podReview(b, "bench", admissionv1.Create, testPod(map[string]string{"team": "a"}), nil)
	roundTrips(b, f.client, f.base+app.PodMutatePath, body)
}

// BenchmarkValidate: the same on the validating path (an allowed Pod).
func BenchmarkValidate(b *testing.B) {
	f := startFixture(b, podHooks(), nil)
	body := podReview(b, "bench", admissionv1.Create, testPod(map[string]string{admission.PodAnnotationKey: "foo"}), nil)
	roundTrips(b, f.client, f.base+app.PodValidatePath, body)
}

// BenchmarkTLSEcho is the floor: a bare net/http TLS server that echoes the
// same body, with the same certificate, TLS settings and client.
func BenchmarkTLSEcho(b *testing.B) {
	f := startFixture(b, podHooks(), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.Copy(w, r.Body)
		}),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: f.certs.GetCertificate},
		Protocols:         protocols,
		ReadHeaderTimeout: 5 * time.Second,
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTLS(ln, "", "") }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()); <-done })
	body := podReview(b, "bench", admissionv1.Create, testPod(map[string]string{"team": "a"}), nil)
	roundTrips(b, f.client, "https://"+ln.Addr().String()+"/echo", body)
}

// roundTrips posts body from benchConcurrency goroutines and reports
// requests per second and the p50/p99 latency.
func roundTrips(b *testing.B, client *http.Client, url string, body []byte) {
	b.Helper()
	b.SetParallelism((benchConcurrency + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var all []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			start := time.Now()
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %s", resp.Status)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(began)
	b.StopTimer()
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op") // per-op time is meaningless across 32 clients; req/s says it
}

// BenchmarkHandler is one request's own cost in the handler, without TLS,
// the network or a client: decode the review, run the rule, build the
// patch, encode the answer (admission), or convert one ChaosPod (/convert).
func BenchmarkHandler(b *testing.B) {
	f := startFixture(b, podHooks(), nil, app.ChaosPodConversion())
	h := f.server.Handler()
	cases := []struct {
		name, path string
		body       []byte
	}{
		{"mutate", app.PodMutatePath, podReview(b, "bench", admissionv1.Create, testPod(map[string]string{"team": "a"}), nil)},
		{"validate", app.PodValidatePath, podReview(b, "bench", admissionv1.Create, testPod(map[string]string{admission.PodAnnotationKey: "foo"}), nil)},
		{"convert-v2-to-v1", app.ConvertPath, conversionReview("bench", "chaosapps.metamagical.io/v1", v2ChaosPod)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(tc.body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", tc.path, rec.Code, rec.Body)
				}
			}
		})
	}
}
