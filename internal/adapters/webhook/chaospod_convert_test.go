package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
)

func convert(t *testing.T, review string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	webhook.ConvertHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, webhook.ConvertPath, bytes.NewBufferString(review)))
	var out map[string]any
	if rec.Code == http.StatusOK {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	}
	return rec.Code, out
}

func TestConvertV2ToV1AndBack(t *testing.T) {
	t.Parallel()
	v2 := `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a","namespace":"ns"},
		"spec":{"podTemplate":{"metadata":{"labels":{"app":"x"}}},"stop":{"at":"2030-01-01T00:00:00Z","interval":"3s"}}}`
	code, out := convert(t, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u1",
		"desiredAPIVersion":"chaosapps.metamagical.io/v1","objects":[`+v2+`]}}`)
	require.Equal(t, http.StatusOK, code)
	resp := out["response"].(map[string]any)
	assert.Equal(t, "u1", resp["uid"])
	assert.Equal(t, "Success", resp["result"].(map[string]any)["status"])
	v1 := resp["convertedObjects"].([]any)[0].(map[string]any)
	assert.Equal(t, "chaosapps.metamagical.io/v1", v1["apiVersion"])
	spec := v1["spec"].(map[string]any)
	assert.Equal(t, "2030-01-01T00:00:00Z", spec["nextStop"])
	assert.Equal(t, map[string]any{"app": "x"}, spec["template"].(map[string]any)["metadata"].(map[string]any)["labels"])
	assert.Equal(t, "3s", v1["metadata"].(map[string]any)["annotations"].(map[string]any)["chaosapps.metamagical.io/stop-interval"])

	raw, err := json.Marshal(v1)
	require.NoError(t, err)
	code, out = convert(t, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u2",
		"desiredAPIVersion":"chaosapps.metamagical.io/v2","objects":[`+string(raw)+`]}}`)
	require.Equal(t, http.StatusOK, code)
	back := out["response"].(map[string]any)["convertedObjects"].([]any)[0].(map[string]any)
	stop := back["spec"].(map[string]any)["stop"].(map[string]any)
	assert.Equal(t, "3s", stop["interval"])
	assert.Equal(t, "2030-01-01T00:00:00Z", stop["at"])
	assert.NotContains(t, back["metadata"], "annotations")
}

func TestConvertFailures(t *testing.T) {
	t.Parallel()
	code, out := convert(t, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u",
		"desiredAPIVersion":"chaosapps.metamagical.io/v9","objects":[{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod"}]}}`)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Failure", out["response"].(map[string]any)["result"].(map[string]any)["status"])

	code, _ = convert(t, `not json`)
	assert.Equal(t, http.StatusBadRequest, code)
}
