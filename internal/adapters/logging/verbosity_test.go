package logging_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

// raiseKlogVerbosity sets klog's own -v, the other way its verbosity can be
// raised, until the test ends.
func raiseKlogVerbosity(t *testing.T, v int) {
	t.Helper()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	require.NoError(t, fs.Set("v", strconv.Itoa(v)))
	t.Cleanup(func() { _ = fs.Set("v", "0") })
}

// highestLevels are the largest --zap-log-level integers: the one beyond
// which zap's level is clamped, and the largest the flag parses at all.
var highestLevels = []string{"127", strconv.Itoa(math.MaxInt)}

// Not parallel: klog is process-global.
func TestKlogVerbosityIsCappedAtTheHighestLevel(t *testing.T) {
	for _, level := range highestLevels {
		t.Run(level, func(t *testing.T) {
			var out syncBuffer
			z, err := logging.New(logging.Options{Level: level, Output: &out})
			require.NoError(t, err)
			restore := logging.RedirectKlog(z)
			defer restore()
			raiseKlogVerbosity(t, 10)

			ctx := klog.NewContext(context.Background(), klog.Background())
			for v := 0; v <= 10; v++ {
				klog.V(klog.Level(v)).InfoS("klog.V", "v", v)
				klog.V(klog.Level(v)).Info("klog.V.Info")
				klog.Background().V(v).Info("background", "v", v)
				klog.FromContext(ctx).V(v).Info("from context", "v", v)
				logging.NewLogr(z).V(v).Info("logr", "v", v)
				// logr adds up nested levels: V(3).V(3) is V(6).
				klog.Background().V(3).V(v).Info("nested", "v", v+3)
			}

			seen := map[string]int{}
			for _, e := range out.entries(t) {
				msg := e["msg"].(string)
				v, ok := e["v"].(float64)
				if !ok { // klog's printf-style line carries no v
					v = -float64(mustLevel(t, e["level"]))
				}
				assert.LessOrEqual(t, int(v), logging.MaxLibraryVerbosity, "%s at V(%v) reached the log", msg, v)
				seen[msg]++
			}
			perMessage := logging.MaxLibraryVerbosity + 1 // V(0)..V(cap)
			for _, msg := range []string{"klog.V", "klog.V.Info", "background", "from context", "logr"} {
				assert.Equal(t, perMessage, seen[msg], "%s lines V(0)..V(%d) are all logged", msg, logging.MaxLibraryVerbosity)
			}
			assert.Equal(t, perMessage-3, seen["nested"])

			assert.True(t, klog.Background().V(logging.MaxLibraryVerbosity).Enabled())
			for v := logging.MaxLibraryVerbosity + 1; v <= 10; v++ {
				assert.False(t, klog.Background().V(v).Enabled(), "V(%d) enabled", v)
				assert.False(t, logging.NewLogr(z).V(v).Enabled(), "V(%d) enabled", v)
			}
		})
	}
}

// mustLevel reads zap's "level" field ("info", "debug", "Level(-n)").
func mustLevel(t *testing.T, l any) int {
	t.Helper()
	switch s := l.(string); s {
	case "info":
		return 0
	case "debug":
		return -1
	default:
		var n int
		_, err := fmt.Sscanf(s, "Level(%d)", &n)
		require.NoError(t, err, "level %q", s)
		return n
	}
}

// The leak the cap exists for: client-go's REST client logs request and
// response bodies at V(8) and its debugging round tripper logs URLs and
// headers from V(6). A TokenReview's body holds the token under review.
// Not parallel: klog is process-global.
func TestClientGoLogsNoBodiesAtTheHighestLevel(t *testing.T) {
	const token = "scraper-token-7f3a91c2" //nolint:gosec // a made-up token
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":%q},"status":{"authenticated":true}}`, token)
	}))
	defer srv.Close()

	for _, level := range highestLevels {
		t.Run(level, func(t *testing.T) {
			var out syncBuffer
			z, err := logging.New(logging.Options{Level: level, Output: &out})
			require.NoError(t, err)
			restore := logging.RedirectKlog(z)
			defer restore()
			// With klog's -v at 10, client-go also wraps its transport in
			// the debugging round tripper, which decides what to log from
			// the request's contextual logger.
			raiseKlogVerbosity(t, 10)

			client, err := rest.RESTClientFor(&rest.Config{
				Host: srv.URL,
				ContentConfig: rest.ContentConfig{
					GroupVersion:         &schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"},
					NegotiatedSerializer: serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion(),
				},
			})
			require.NoError(t, err)
			defer client.Client.CloseIdleConnections()
			body := fmt.Sprintf(`{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":%q}}`, token)
			raw, err := client.Post().AbsPath("/apis/authentication.k8s.io/v1/tokenreviews").
				SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(context.Background()).Raw()
			require.NoError(t, err)
			require.Contains(t, string(raw), token, "the server answered")
			klog.Background().V(logging.MaxLibraryVerbosity).Info("still logging at the cap")

			var capped bool
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				assert.NotContains(t, line, token)
				for _, msg := range []string{"Request Body", "Response Body", "Request", "Response", "HTTP Trace"} {
					assert.NotContains(t, line, `"msg":"`+msg, "client-go's request logging")
				}
				capped = capped || strings.Contains(line, "still logging at the cap")
			}
			assert.True(t, capped, "V(%d) is logged", logging.MaxLibraryVerbosity)
		})
	}
}
