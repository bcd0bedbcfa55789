package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// ConvertPath is where the CRD's conversion webhook calls (SPEC §1.2).
const ConvertPath = "/convert"

// maxConversionBody bounds a ConversionReview; the API server batches list
// conversions, so this is larger than an admission request.
const maxConversionBody = 32 << 20

// The ConversionReview v1 wire shape, declared here so that the operator
// does not depend on k8s.io/apiextensions-apiserver for three structs.
type conversionReview struct {
	metav1.TypeMeta `json:",inline"`
	Request         *conversionRequest  `json:"request,omitempty"`
	Response        *conversionResponse `json:"response,omitempty"`
}

type conversionRequest struct {
	UID               types.UID              `json:"uid"`
	DesiredAPIVersion string                 `json:"desiredAPIVersion"`
	Objects           []runtime.RawExtension `json:"objects"`
}

type conversionResponse struct {
	UID              types.UID              `json:"uid"`
	ConvertedObjects []runtime.RawExtension `json:"convertedObjects"`
	Result           metav1.Status          `json:"result"`
}

// ConvertHandler answers ConversionReview v1 requests for ChaosPods with
// the pure conversions of package v2 (v1 is the hub). A failed conversion
// is answered with result Failure, which the API server reports to the
// client; only a request that is not a ConversionReview gets an HTTP error.
func ConvertHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxConversionBody+1))
		if err != nil || len(body) > maxConversionBody {
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		var review conversionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(w, "expected a ConversionReview with a request", http.StatusBadRequest)
			return
		}
		resp := convert(review.Request)
		out, err := json.Marshal(conversionReview{TypeMeta: review.TypeMeta, Response: resp})
		if err != nil {
			http.Error(w, "cannot encode response", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// convert converts every object of req to req.DesiredAPIVersion.
func convert(req *conversionRequest) *conversionResponse {
	resp := &conversionResponse{UID: req.UID, ConvertedObjects: make([]runtime.RawExtension, 0, len(req.Objects))}
	for i, raw := range req.Objects {
		out, err := convertChaosPod(raw.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("object %d: %v", i, err)}
			return resp
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	return resp
}

func convertChaosPod(raw []byte, desired string) ([]byte, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if meta.Kind != chaosv1.Kind {
		return nil, fmt.Errorf("cannot convert kind %q", meta.Kind)
	}
	// Decode to the hub first.
	var hub *chaosv1.ChaosPod
	switch meta.APIVersion {
	case chaosv1.SchemeGroupVersion.String():
		hub = &chaosv1.ChaosPod{}
		if err := json.Unmarshal(raw, hub); err != nil {
			return nil, fmt.Errorf("decode %s: %w", meta.APIVersion, err)
		}
	case chaosv2.SchemeGroupVersion.String():
		var v2 chaosv2.ChaosPod
		if err := json.Unmarshal(raw, &v2); err != nil {
			return nil, fmt.Errorf("decode %s: %w", meta.APIVersion, err)
		}
		hub = chaosv2.ToHub(&v2)
	default:
		return nil, fmt.Errorf("cannot convert from %q", meta.APIVersion)
	}
	var out any
	switch desired {
	case chaosv1.SchemeGroupVersion.String():
		hub.APIVersion, hub.Kind = desired, chaosv1.Kind
		out = hub
	case chaosv2.SchemeGroupVersion.String():
		out = chaosv2.FromHub(hub)
	default:
		return nil, fmt.Errorf("cannot convert to %q", desired)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", desired, err)
	}
	return b, nil
}
