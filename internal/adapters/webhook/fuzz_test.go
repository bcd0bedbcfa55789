package webhook

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/hexagonal-operator/operator/internal/domain/admission"
)

type noCerts struct{}

func (noCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return nil, errors.New("fuzzing without TLS")
}

// FuzzAdmissionReview sends arbitrary bodies to both Pod hooks. Whatever
// the input, the server answers a client error or a well-formed review for
// the request's UID, never an internal error, and a patch applies to the
// object it was computed for. The seeds in testdata/fuzz run with every
// `go test`; `go test -fuzz FuzzAdmissionReview` explores further.
func FuzzAdmissionReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"},"operation":"CREATE","object":{"metadata":{"name":"p"}}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"2","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"},"operation":"UPDATE","object":{"metadata":{"annotations":{"a":"b"}}},"oldObject":{}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"3"}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))

	s, err := New(Options{}, noCerts{}, PodHooks(admission.NewPodAnnotator(), admission.NewPodValidator()), prometheus.NewRegistry(), zap.NewNop())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{PodMutatePath, PodValidatePath} {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			s.mux.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
				continue
			case http.StatusOK:
			default:
				t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
			}
			var sent, got admissionv1.AdmissionReview
			if err := json.Unmarshal(body, &sent); err != nil {
				t.Fatalf("%s: answered 200 to a body that does not decode: %v", path, err)
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
				t.Fatalf("%s: answer is not a review: %v: %s", path, err, rec.Body)
			}
			if got.Response.UID != sent.Request.UID {
				t.Fatalf("%s: answered uid %q to %q", path, got.Response.UID, sent.Request.UID)
			}
			if got.Response.Result != nil && got.Response.Result.Code >= 500 {
				t.Fatalf("%s: internal error: %s", path, got.Response.Result.Message)
			}
			if got.Response.Patch != nil {
				p, err := jsonpatch.DecodePatch(got.Response.Patch)
				if err != nil {
					t.Fatalf("%s: bad patch: %v", path, err)
				}
				if _, err := p.Apply(sent.Request.Object.Raw); err != nil {
					t.Fatalf("%s: patch does not apply to the object sent: %v", path, err)
				}
			}
		}
	})
}
