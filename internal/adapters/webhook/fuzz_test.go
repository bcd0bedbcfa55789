package webhook

import (
	"bytes"
	"context"
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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
)

type noCerts struct{}

func (noCerts) Start(context.Context) error { return nil }
func (noCerts) Stop(context.Context) error  { return nil }

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

	row := func(path string) Hook {
		return Hook{Name: path[1:] + ".test", Path: path, TimeoutSeconds: 10,
			Resource:   Resource{Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: corev1.SchemeGroupVersion.WithResource("pods")},
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}}
	}
	hooks := []Hook{
		Mutating[corev1.Pod](row("/mutate"), admission.NewPodAnnotator()),
		Validating[corev1.Pod](row("/validate"), admission.NewPodValidator()),
	}
	s, err := New(Options{}, noCerts{}, hooks, prometheus.NewRegistry(), zap.NewNop())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/mutate", "/validate"} {
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

// FuzzConversionReview sends arbitrary bodies to /convert. Whatever the
// input, the server answers a client error or a review for the request's
// UID; a successful conversion gives one object per object sent, at the
// desired version, and converting it back gives the object that was sent
// (as the Go types read it). Seeds in testdata/fuzz run with every
// `go test`; `go test -fuzz FuzzConversionReview` explores further.
func FuzzConversionReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"chaosapps.metamagical.io/v1","objects":[{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a"},"spec":{"podTemplate":{},"stop":{"at":"2030-01-01T00:00:00Z","interval":"3s"}}}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"2","desiredAPIVersion":"chaosapps.metamagical.io/v2","objects":[{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod","metadata":{"annotations":{"chaosapps.metamagical.io/stop-interval":"1m"}},"spec":{"nextStop":"2030-01-01T00:00:00Z"}}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"3","desiredAPIVersion":"v9","objects":[{}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`))
	f.Add([]byte(``))

	convert := Conversion{Path: "/convert", Convert: func(_ context.Context, raw []byte, desired string) ([]byte, error) {
		return chaosv2.ConvertJSON(raw, desired)
	}}
	s, err := New(Options{}, noCerts{}, nil, prometheus.NewRegistry(), zap.NewNop(), convert)
	if err != nil {
		f.Fatal(err)
	}
	post := func(t *testing.T, body []byte) (int, *apiextensionsv1.ConversionReview) {
		req := httptest.NewRequest(http.MethodPost, convert.Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return rec.Code, nil
		}
		var got apiextensionsv1.ConversionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Response == nil {
			t.Fatalf("answer is not a review: %v: %s", err, rec.Body)
		}
		return rec.Code, &got
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		code, got := post(t, body)
		switch code {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			return
		case http.StatusOK:
		default:
			t.Fatalf("status %d", code)
		}
		var sent apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &sent); err != nil {
			t.Fatalf("answered 200 to a body that does not decode: %v", err)
		}
		if got.Response.UID != sent.Request.UID {
			t.Fatalf("answered uid %q to %q", got.Response.UID, sent.Request.UID)
		}
		if got.Response.Result.Status != metav1.StatusSuccess {
			return
		}
		if len(got.Response.ConvertedObjects) != len(sent.Request.Objects) {
			t.Fatalf("%d objects converted, %d sent", len(got.Response.ConvertedObjects), len(sent.Request.Objects))
		}
		for i, obj := range got.Response.ConvertedObjects {
			var meta metav1.TypeMeta
			if err := json.Unmarshal(obj.Raw, &meta); err != nil || meta.APIVersion != sent.Request.DesiredAPIVersion {
				t.Fatalf("object %d: converted to %q (%v), want %q", i, meta.APIVersion, err, sent.Request.DesiredAPIVersion)
			}
			roundTrips(t, post, sent.Request.Objects[i].Raw, obj.Raw)
		}
	})
}

// roundTrips converts converted back to the version of original and
// checks that the Go types read the result as they read original. Objects
// the Go types cannot read, or that use the annotation reserved for v2's
// interval, are not held to it.
func roundTrips(t *testing.T, post func(*testing.T, []byte) (int, *apiextensionsv1.ConversionReview), original, converted []byte) {
	var meta metav1.TypeMeta
	_ = json.Unmarshal(original, &meta)
	decode := func(raw []byte) (any, bool) {
		var obj interface{ GetAnnotations() map[string]string }
		switch meta.APIVersion {
		case chaosv1.SchemeGroupVersion.String():
			obj = &chaosv1.ChaosPod{}
		case chaosv2.SchemeGroupVersion.String():
			obj = &chaosv2.ChaosPod{}
		default:
			return nil, false
		}
		if json.Unmarshal(raw, obj) != nil {
			return nil, false
		}
		_, reserved := obj.GetAnnotations()[chaosv1.StopIntervalAnnotation]
		return obj, !(reserved && meta.APIVersion == chaosv2.SchemeGroupVersion.String())
	}
	want, ok := decode(original)
	if !ok {
		return
	}
	review, err := json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: "back", DesiredAPIVersion: meta.APIVersion, Objects: []runtime.RawExtension{{Raw: converted}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	code, back := post(t, review)
	if code != http.StatusOK || back.Response.Result.Status != metav1.StatusSuccess {
		t.Fatalf("converting back failed: %d %+v", code, back)
	}
	got, ok := decode(back.Response.ConvertedObjects[0].Raw)
	if !ok || !equality.Semantic.DeepEqual(want, got) {
		t.Fatalf("round trip changed the object:\nsent: %s\nback: %s", original, back.Response.ConvertedObjects[0].Raw)
	}
}
