package v2_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func fromMap[T any](t *testing.T, m map[string]any) *T {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	out := new(T)
	require.NoError(t, json.Unmarshal(b, out))
	return out
}

// typed is v as the Go type T reads its JSON, so both sides of a comparison
// go through the same encoding.
func typed[T any](t *testing.T, v any) *T {
	t.Helper()
	return fromMap[T](t, toMap(t, v))
}

func TestJSONConversionAgreesWithTheTypedOne(t *testing.T) {
	t.Parallel()
	for seed := range int64(300) {
		f := filler(seed)
		var v2 chaosv2.ChaosPod
		f.Fill(&v2)
		v2.TypeMeta = metav1.TypeMeta{APIVersion: chaosv2.SchemeGroupVersion.String(), Kind: chaosv1.Kind}
		delete(v2.Annotations, chaosv1.StopIntervalAnnotation)
		if seed%3 == 0 {
			v2.Spec.Stop.Interval = &metav1.Duration{Duration: time.Duration(rand.Int64N(int64(24 * time.Hour)))}
		}

		m := toMap(t, &v2)
		require.NoError(t, chaosv2.ToHubJSON(m), "seed %d", seed)
		require.Equal(t, typed[chaosv1.ChaosPod](t, chaosv2.ToHub(&v2)), typed[chaosv1.ChaosPod](t, m), "seed %d: ToHubJSON and ToHub disagree", seed)

		hub := chaosv2.ToHub(&v2)
		m = toMap(t, hub)
		require.NoError(t, chaosv2.FromHubJSON(m), "seed %d", seed)
		require.Equal(t, typed[chaosv2.ChaosPod](t, chaosv2.FromHub(hub)), typed[chaosv2.ChaosPod](t, m), "seed %d: FromHubJSON and FromHub disagree", seed)
	}
}

// The JSON conversion keeps what the Go types would drop or respell.
func TestJSONRoundTripsAreByteForByte(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in        string
		there     func(map[string]any) error
		back      func(map[string]any) error
		converted string
	}{
		"v2 through v1": {
			in: `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a","creationTimestamp":null},
				"spec":{"podTemplate":{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"i","futureField":{"x":1}}]}},
				"stop":{"at":"2030-01-01T00:00:00Z","interval":"90s"}},"status":{"lastRun":"2029-01-01T00:00:00Z",
				"conditions":[{"type":"Ready","status":"True","observedGeneration":3,"reason":"PodRunning","message":"until then","lastTransitionTime":"2029-01-01T00:00:00Z"}]}}`,
			there: chaosv2.ToHubJSON, back: chaosv2.FromHubJSON,
			converted: `{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod",
				"metadata":{"name":"a","creationTimestamp":null,"annotations":{"chaosapps.metamagical.io/stop-interval":"90s"}},
				"spec":{"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"i","futureField":{"x":1}}]}},
				"nextStop":"2030-01-01T00:00:00Z"},"status":{"lastRun":"2029-01-01T00:00:00Z",
				"conditions":[{"type":"Ready","status":"True","observedGeneration":3,"reason":"PodRunning","message":"until then","lastTransitionTime":"2029-01-01T00:00:00Z"}]}}`,
		},
		"v1 through v2": {
			in: `{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod","metadata":{"name":"a","annotations":{"keep":"me","chaosapps.metamagical.io/stop-interval":"1m"}},
				"spec":{"template":{"spec":{"containers":[]}},"nextStop":"2030-01-01T00:00:00Z"}}`,
			there: chaosv2.FromHubJSON, back: chaosv2.ToHubJSON,
			converted: `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a","annotations":{"keep":"me"}},
				"spec":{"podTemplate":{"spec":{"containers":[]}},"stop":{"at":"2030-01-01T00:00:00Z","interval":"1m"}}}`,
		},
		"v1 with a garbage interval": {
			in:    `{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod","metadata":{"annotations":{"chaosapps.metamagical.io/stop-interval":"soon"}},"spec":{}}`,
			there: chaosv2.FromHubJSON, back: chaosv2.ToHubJSON,
			converted: `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"annotations":{"chaosapps.metamagical.io/stop-interval":"soon"}},"spec":{}}`,
		},
		"v1 without a spec": {
			in:        `{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod","metadata":{"name":"a"}}`,
			there:     chaosv2.FromHubJSON,
			back:      chaosv2.ToHubJSON,
			converted: `{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","metadata":{"name":"a"}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var obj, want, converted map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &obj))
			require.NoError(t, json.Unmarshal([]byte(tc.in), &want))
			require.NoError(t, json.Unmarshal([]byte(tc.converted), &converted))

			require.NoError(t, tc.there(obj))
			assert.Equal(t, converted, obj)
			require.NoError(t, tc.back(obj))
			assert.Equal(t, want, obj)
		})
	}
}

func TestJSONConversionRejectsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in      string
		convert func(map[string]any) error
		err     string
	}{
		"wrong version": {`{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod"}`, chaosv2.ToHubJSON, "want chaosapps.metamagical.io/v2 ChaosPod"},
		"wrong kind":    {`{"apiVersion":"chaosapps.metamagical.io/v1","kind":"Pod"}`, chaosv2.FromHubJSON, "kind Pod"},
		"spec a string": {`{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","spec":"x"}`, chaosv2.ToHubJSON, "spec is a string"},
		"interval num":  {`{"apiVersion":"chaosapps.metamagical.io/v2","kind":"ChaosPod","spec":{"stop":{"interval":3}}}`, chaosv2.ToHubJSON, "spec.stop.interval is a float64"},
		"annotations":   {`{"apiVersion":"chaosapps.metamagical.io/v1","kind":"ChaosPod","metadata":{"annotations":[]}}`, chaosv2.FromHubJSON, "annotations is a []interface {}"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &obj))
			require.ErrorContains(t, tc.convert(obj), tc.err)
		})
	}
}
