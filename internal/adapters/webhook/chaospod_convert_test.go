package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
)

func startConverter(t *testing.T, mod func(*webhook.Options)) *fixture {
	t.Helper()
	return startFixture(t, podHooks(), mod, app.ChaosPodConversion())
}

// conversionReview is a ConversionReview v1 asking for desired.
func conversionReview(uid, desired string, objects ...string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":%q,"desiredAPIVersion":%q,"objects":[%s]}}`,
		uid, desired, strings.Join(objects, ","))
}

type conversionAnswer struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   struct {
		UID              string           `json:"uid"`
		ConvertedObjects []map[string]any `json:"convertedObjects"`
		Result           struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"result"`
	} `json:"response"`
}

func (f *fixture) convert(t *testing.T, body []byte) conversionAnswer {
	t.Helper()
	resp, data := f.post(t, app.ConvertPath, "application/json", body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	var out conversionAnswer
	require.NoError(t, json.Unmarshal(data, &out))
	require.Equal(t, "apiextensions.k8s.io/v1", out.APIVersion)
	require.Equal(t, "ConversionReview", out.Kind)
	return out
}

const v2ChaosPod = `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a","namespace":"ns","uid":"1"},
	"spec":{"podTemplate":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}},"stop":{"at":"2030-01-01T00:00:00Z","interval":"3s"}},
	"status":{"lastRun":"2029-12-31T23:59:57Z"}}`

func TestConvertV2ToV1AndBack(t *testing.T) {
	t.Parallel()
	f := startConverter(t, nil)

	out := f.convert(t, conversionReview("u1", "chaosapps.metamagical.io/v1", v2ChaosPod))
	assert.Equal(t, "u1", out.Response.UID)
	require.Equal(t, "Success", out.Response.Result.Status, out.Response.Result.Message)
	require.Len(t, out.Response.ConvertedObjects, 1)
	v1 := out.Response.ConvertedObjects[0]
	assert.Equal(t, "chaosapps.metamagical.io/v1", v1["apiVersion"])
	spec := v1["spec"].(map[string]any)
	assert.Equal(t, "2030-01-01T00:00:00Z", spec["nextStop"])
	assert.Equal(t, map[string]any{"app": "x"}, spec["template"].(map[string]any)["metadata"].(map[string]any)["labels"])
	assert.Equal(t, "3s", v1["metadata"].(map[string]any)["annotations"].(map[string]any)["chaosapps.metamagical.io/stop-interval"])
	assert.Equal(t, "2029-12-31T23:59:57Z", v1["status"].(map[string]any)["lastRun"])

	raw, err := json.Marshal(v1)
	require.NoError(t, err)
	out = f.convert(t, conversionReview("u2", "chaosapps.metamagical.io/v2", string(raw)))
	require.Equal(t, "Success", out.Response.Result.Status, out.Response.Result.Message)
	var want, got map[string]any
	require.NoError(t, json.Unmarshal([]byte(v2ChaosPod), &want))
	got = out.Response.ConvertedObjects[0]
	assert.Equal(t, want["spec"], got["spec"], "v2 → v1 → v2 must give back the v2 spec")
	assert.Equal(t, want["status"], got["status"])
	assert.NotContains(t, got["metadata"], "annotations", "the v1-only annotation must not leak into v2")
}

func TestConvertAListInOneReview(t *testing.T) {
	t.Parallel()
	f := startConverter(t, nil)
	objects := make([]string, 50)
	for i := range objects {
		objects[i] = strings.Replace(v2ChaosPod, `"name":"a"`, fmt.Sprintf(`"name":"a%d"`, i), 1)
	}
	out := f.convert(t, conversionReview("list", "chaosapps.metamagical.io/v1", objects...))
	require.Equal(t, "Success", out.Response.Result.Status)
	require.Len(t, out.Response.ConvertedObjects, len(objects))
	for i, o := range out.Response.ConvertedObjects {
		assert.Equal(t, fmt.Sprintf("a%d", i), o["metadata"].(map[string]any)["name"], "order is kept")
	}
}

func TestConversionFailuresAreReviewsWithResultFailure(t *testing.T) {
	t.Parallel()
	f := startConverter(t, nil)
	for name, tc := range map[string]struct {
		body    []byte
		message string
	}{
		"unknown desired version": {conversionReview("u", "chaosapps.metamagical.io/v9", v2ChaosPod), `cannot convert to "chaosapps.metamagical.io/v9"`},
		"unknown source version":  {conversionReview("u", "chaosapps.metamagical.io/v1", `{"apiVersion":"chaosapps.metamagical.io/v0","kind":"ChaosPod"}`), `cannot convert from`},
		"other kind":              {conversionReview("u", "chaosapps.metamagical.io/v1", `{"apiVersion":"v1","kind":"Pod"}`), `cannot convert kind "Pod"`},
		"malformed object":        {conversionReview("u", "chaosapps.metamagical.io/v1", `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","spec":{"stop":{"interval":7}}}`), `spec.stop.interval is a float64`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := f.convert(t, tc.body)
			assert.Equal(t, "u", out.Response.UID)
			assert.Equal(t, "Failure", out.Response.Result.Status)
			assert.Contains(t, out.Response.Result.Message, tc.message)
			assert.Empty(t, out.Response.ConvertedObjects)
		})
	}
}

func TestBadConversionRequestsAreAnsweredWithHTTPErrors(t *testing.T) {
	t.Parallel()
	f := startConverter(t, func(o *webhook.Options) { o.MaxConversionBytes = 4 << 10 })
	for name, tc := range map[string]struct {
		contentType string
		body        []byte
		code        int
		message     string
	}{
		"not json":         {"application/json", []byte("not json"), http.StatusBadRequest, "decode ConversionReview"},
		"wrong type":       {"text/plain", conversionReview("u", "chaosapps.metamagical.io/v1"), http.StatusUnsupportedMediaType, "content type"},
		"empty":            {"application/json", nil, http.StatusBadRequest, "ConversionReview"},
		"admission":        {"application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}`), http.StatusBadRequest, "speaks only apiextensions.k8s.io/v1 ConversionReview"},
		"no request":       {"application/json", []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), http.StatusBadRequest, "without a request"},
		"no uid":           {"application/json", conversionReview("", "chaosapps.metamagical.io/v1"), http.StatusBadRequest, "without a uid"},
		"over the limit":   {"application/json", conversionReview("u", "chaosapps.metamagical.io/v1", strings.Repeat(v2ChaosPod+",", 20)+v2ChaosPod), http.StatusRequestEntityTooLarge, "exceeds the limit"},
		"within the limit": {"application/json", conversionReview("u", "chaosapps.metamagical.io/v1", v2ChaosPod), http.StatusOK, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp, data := f.post(t, app.ConvertPath, tc.contentType, tc.body)
			assert.Equal(t, tc.code, resp.StatusCode, string(data))
			assert.Contains(t, string(data), tc.message)
		})
	}
	resp, err := f.client.Get(f.base + app.ConvertPath)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestConversionsAreMeasuredAndLogged(t *testing.T) {
	t.Parallel()
	f := startConverter(t, nil)
	f.convert(t, conversionReview("ok", "chaosapps.metamagical.io/v1", v2ChaosPod))
	f.convert(t, conversionReview("bad", "chaosapps.metamagical.io/v9", v2ChaosPod))

	m := gather(t, f.reg)
	assert.Equal(t, 2.0, m[`controller_runtime_webhook_requests_total{code="200",webhook="/convert"}`])
	assert.Equal(t, 2.0, m[`controller_runtime_webhook_latency_seconds_count{webhook="/convert"}`])
	assert.Equal(t, 0.0, m[`controller_runtime_webhook_requests_in_flight{webhook="/convert"}`])

	lines := f.logs.FilterMessage("conversion request").All()
	require.Len(t, lines, 2)
	byUID := map[string]zapcore.Level{}
	for _, l := range lines {
		ctx := l.ContextMap()
		assert.Equal(t, app.ConvertPath, ctx["webhook"])
		assert.EqualValues(t, 1, ctx["objects"])
		byUID[ctx["uid"].(string)] = l.Level
	}
	assert.Equal(t, map[string]zapcore.Level{"ok": zapcore.DebugLevel, "bad": zapcore.ErrorLevel}, byUID,
		"a successful conversion is routine, a failed one breaks a client's read")
}

func TestConversionPathMustNotCollide(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	_, err := webhook.New(webhook.Options{Port: webhook.AnyPort}, f.certs, podHooks(), prometheus.NewRegistry(), zap.NewNop(),
		webhook.Conversion{Path: app.PodMutatePath, Convert: app.ChaosPodConversion().Convert})
	require.ErrorContains(t, err, "served twice")
	_, err = webhook.New(webhook.Options{Port: webhook.AnyPort}, f.certs, nil, prometheus.NewRegistry(), zap.NewNop(), webhook.Conversion{Path: "convert"})
	require.ErrorContains(t, err, "must start with /")
	require.ErrorContains(t, err, "no convert function")
}
