package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Conversion is a CRD conversion endpoint: the server answers
// apiextensions.k8s.io/v1 ConversionReviews at Path with Convert, which
// converts one serialized object to desiredAPIVersion without changing its
// meaning.
type Conversion struct {
	Path string // also the `webhook` metric label
	// CRD is the name of the CustomResourceDefinition whose conversion
	// webhook calls Path, for its manifest.
	CRD     string
	Convert func(ctx context.Context, raw []byte, desiredAPIVersion string) ([]byte, error)
}

// serveConversion answers a ConversionReview. A request that is not a v1
// ConversionReview with a request and a UID gets an HTTP error; a failed
// conversion is a review with result Failure, which the API server reports
// to the client that asked for the object.
func (s *Server) serveConversion(c Conversion) func(http.ResponseWriter, *http.Request, *outcome) {
	return func(w http.ResponseWriter, r *http.Request, out *outcome) {
		body, ok := s.readBody(w, r, s.opts.MaxConversionBytes, "an apiextensions.k8s.io/v1 ConversionReview", out)
		if !ok {
			return
		}
		var review apiextensionsv1.ConversionReview
		if err := json.Unmarshal(body, &review); err != nil {
			out.code, out.problem = http.StatusBadRequest, fmt.Sprintf("decode ConversionReview: %v", err)
			return
		}
		if review.APIVersion != apiextensionsv1.SchemeGroupVersion.String() || review.Kind != "ConversionReview" {
			out.code, out.problem = http.StatusBadRequest, fmt.Sprintf("got apiVersion %q kind %q; this server speaks only apiextensions.k8s.io/v1 ConversionReview", review.APIVersion, review.Kind)
			return
		}
		req := review.Request
		if req == nil {
			out.code, out.problem = http.StatusBadRequest, "ConversionReview without a request"
			return
		}
		out.fields = []zap.Field{zap.String("uid", string(req.UID)), zap.String("desiredAPIVersion", req.DesiredAPIVersion), zap.Int("objects", len(req.Objects))}
		if req.UID == "" {
			out.code, out.problem = http.StatusBadRequest, "ConversionReview request without a uid"
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: req.UID, ConvertedObjects: make([]runtime.RawExtension, 0, len(req.Objects)), Result: metav1.Status{Status: metav1.StatusSuccess}}
		for i, obj := range req.Objects {
			converted, err := c.Convert(r.Context(), obj.Raw, req.DesiredAPIVersion)
			if err != nil {
				resp.ConvertedObjects = nil
				resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("convert object %d to %s: %v", i, req.DesiredAPIVersion, err)}
				break
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
		}
		out.code, out.review = http.StatusOK, &apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Response: resp}
		// Successes at debug: every read of a v2 object is one.
		out.level = zapcore.DebugLevel
		if resp.Result.Status != metav1.StatusSuccess {
			out.fields, out.level = append(out.fields, zap.String("error", resp.Result.Message)), zapcore.ErrorLevel
		}
	}
}
