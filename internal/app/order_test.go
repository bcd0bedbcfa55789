package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/hexagonal-operator/operator/internal/app"
)

// startHooks records the OnStart hooks fx runs, by function name.
type startHooks struct {
	mu    sync.Mutex
	names []string
}

func (h *startHooks) LogEvent(e fxevent.Event) {
	if ex, ok := e.(*fxevent.OnStartExecuting); ok {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.names = append(h.names, ex.FunctionName)
	}
}

func (h *startHooks) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.names...)
}

// The preflight checks run before anything listens or watches: with a
// permission or the ChaosPod CRD missing, start-up fails without a server,
// informer or controller ever started.
func TestPreflightRunsBeforeServersAndInformers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		allowed   bool
		failFirst int32 // access reviews answered 503 before the others
		want      string
		checks    int
	}{
		{"a permission missing", false, 0, "lacks", 2},
		{"the ChaosPod CRD missing", true, 0, "missing CRD chaospods", 3},
		{"access reviews failing for a moment, then the CRD missing", true, 20, "missing CRD chaospods", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			preflightFails(t, tt.allowed, tt.failFirst, tt.want, tt.checks)
		})
	}
}

func preflightFails(t *testing.T, allowed bool, failFirst int32, want string, wantChecks int) {
	var reviews atomic.Int32
	// An API server that answers /version, allows or refuses every access
	// review, and knows no ChaosPod.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
			return
		}
		if r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" {
			w.Header().Set("Content-Type", "application/json")
			if reviews.Add(1) <= failFirst {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`))
				return
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = fmt.Fprintf(w, `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","status":{"allowed":%t}}`, allowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, srv.URL), 0o600))

	hooks := &startHooks{}
	a := app.New(parse(t, "--kubeconfig="+kubeconfig, "--metrics-bind-address=127.0.0.1:0",
		"--health-probe-bind-address=127.0.0.1:0", "--webhook-port=1", "--webhook-cert-mode=self"),
		fx.WithLogger(func() fxevent.Logger { return hooks }))
	require.NoError(t, a.Err())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := a.Start(ctx)
	require.ErrorContains(t, err, want)

	// Only logging and the two checks ran; a hook of any other adapter
	// (named, or fx's wrapper of an annotated one) before the failure would
	// show here.
	names := hooks.all()
	var checks []string
	for _, n := range names {
		switch {
		case strings.Contains(n, "internal/app.preflight"), strings.Contains(n, "internal/app.permissionCheck"), strings.Contains(n, "internal/app.chaosPodCRDCheck"):
			checks = append(checks, n)
		case strings.Contains(n, "internal/adapters/logging."):
		default:
			t.Errorf("hook %s ran before the preflight checks failed: %v", n, names)
		}
	}
	assert.Len(t, checks, wantChecks, "the checks up to the failing one ran: %v", names)
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer stopCancel()
	_ = a.Stop(stopCtx)
}
