package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ConvertFunc converts one serialized object to desiredAPIVersion and
// returns its serialization. It must not change the object's meaning: the
// API server uses it on every read and write of a non-storage version.
type ConvertFunc func(ctx context.Context, raw []byte, desiredAPIVersion string) ([]byte, error)

// Conversion is a CRD conversion endpoint: the server answers
// apiextensions.k8s.io/v1 ConversionReviews at Path with Convert.
type Conversion struct {
	// Path is the URL path; it is also the `webhook` metric label.
	Path    string
	Convert ConvertFunc
}

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

const conversionReviewAPIVersion = "apiextensions.k8s.io/v1"

func validateConversions(conversions []Conversion, hooks []Hook) error {
	var errs []error
	paths := map[string]bool{}
	for _, h := range hooks {
		paths[h.Path] = true
	}
	for i, c := range conversions {
		what := fmt.Sprintf("conversion %d (%s)", i, c.Path)
		switch {
		case !strings.HasPrefix(c.Path, "/"):
			errs = append(errs, fmt.Errorf("%s: path must start with /", what))
		case paths[c.Path]:
			errs = append(errs, fmt.Errorf("%s: path served twice", what))
		}
		paths[c.Path] = true
		if c.Convert == nil {
			errs = append(errs, fmt.Errorf("%s: no convert function", what))
		}
	}
	return errors.Join(errs...)
}

// conversionOutcome is what one conversion request came to.
type conversionOutcome struct {
	code    int
	problem string
	req     *conversionRequest
	review  *conversionReview
}

// conversionHandler serves one Conversion with the same transport rules,
// metrics and one-line log as the admission hooks.
func (s *Server) conversionHandler(c Conversion) http.Handler {
	pm := s.metrics.forPath(c.Path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := pm.begin()
		var (
			out  conversionOutcome
			seen *conversionRequest
		)
		defer func() {
			p := recover()
			if p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					pm.end(start, http.StatusInternalServerError)
					panic(p)
				}
				s.metrics.conversionPanics.Inc()
				out = conversionOutcome{code: http.StatusInternalServerError, problem: "internal error", req: seen}
				http.Error(w, out.problem, out.code)
			}
			pm.end(start, out.code)
			s.logConversion(c.Path, out, time.Since(start), p)
		}()
		out = s.convert(r.Context(), c, w, r, &seen)
		if out.review == nil {
			http.Error(w, out.problem, out.code)
			return
		}
		out.code = writeJSON(w, out.code, out.review)
	})
}

// convert turns an HTTP request into an outcome. A request that is not a
// v1 ConversionReview with a request and a UID gets an HTTP error; a failed
// conversion is a review with result Failure, which the API server reports
// to the client that asked for the object.
func (s *Server) convert(ctx context.Context, c Conversion, w http.ResponseWriter, r *http.Request, seen **conversionRequest) conversionOutcome {
	body, code, problem := s.readBody(w, r, s.opts.MaxConversionBytes, "an apiextensions.k8s.io/v1 ConversionReview")
	if code != 0 {
		return conversionOutcome{code: code, problem: problem}
	}
	var review conversionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return conversionOutcome{code: http.StatusBadRequest, problem: fmt.Sprintf("decode ConversionReview: %v", err)}
	}
	if review.APIVersion != conversionReviewAPIVersion || review.Kind != "ConversionReview" {
		return conversionOutcome{code: http.StatusBadRequest, problem: fmt.Sprintf("got apiVersion %q kind %q; this server speaks only %s ConversionReview", review.APIVersion, review.Kind, conversionReviewAPIVersion)}
	}
	req := review.Request
	if req == nil {
		return conversionOutcome{code: http.StatusBadRequest, problem: "ConversionReview without a request"}
	}
	*seen = req
	if req.UID == "" {
		return conversionOutcome{code: http.StatusBadRequest, problem: "ConversionReview request without a uid", req: req}
	}
	resp := &conversionResponse{UID: req.UID, ConvertedObjects: make([]runtime.RawExtension, 0, len(req.Objects)), Result: metav1.Status{Status: metav1.StatusSuccess}}
	for i, obj := range req.Objects {
		converted, err := c.Convert(ctx, obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects = nil
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf("convert object %d to %s: %v", i, req.DesiredAPIVersion, err)}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
	}
	return conversionOutcome{
		code:   http.StatusOK,
		req:    req,
		review: &conversionReview{TypeMeta: review.TypeMeta, Response: resp},
	}
}

// logConversion writes the one line per conversion request: successes at
// debug (every read of a v2 object is one), failures at error, requests
// that are not reviews at info.
func (s *Server) logConversion(path string, out conversionOutcome, latency time.Duration, panicked any) {
	fields := []zap.Field{zap.String("webhook", path), zap.Int("code", out.code), zap.Duration("latency", latency)}
	if req := out.req; req != nil {
		fields = append(fields,
			zap.String("uid", string(req.UID)),
			zap.String("desiredAPIVersion", req.DesiredAPIVersion),
			zap.Int("objects", len(req.Objects)))
	}
	level := zapcore.InfoLevel
	switch {
	case panicked != nil:
		level = zapcore.ErrorLevel
		fields = append(fields, zap.Any("panic", panicked), zap.Stack("stack"))
	case out.review != nil && out.review.Response.Result.Status == metav1.StatusSuccess:
		level = zapcore.DebugLevel
	case out.review != nil:
		level = zapcore.ErrorLevel
		fields = append(fields, zap.String("error", out.review.Response.Result.Message))
	default:
		fields = append(fields, zap.String("message", out.problem))
		if out.code >= http.StatusInternalServerError {
			level = zapcore.ErrorLevel
		}
	}
	if ce := s.log.Check(level, "conversion request"); ce != nil {
		ce.Write(fields...)
	}
}
