package cache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// errRefused is the error a dial to a closed port returns, as client-go
// wraps it.
var errRefused = fmt.Errorf("get pods: %w", &net.OpError{Op: "dial", Net: "tcp",
	Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}})

func TestAwaitServerRetriesRefusedConnectionsOnly(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	tests := []struct {
		name      string
		results   []error // what each call returns; the last repeats
		wantCalls int
		wantErr   error
		wantLogs  []string
	}{
		{"success", []error{nil}, 1, nil, nil},
		{"another error is the reflector's to handle", []error{forbidden}, 1, forbidden, nil},
		{"refused, then served", []error{errRefused, errRefused, nil}, 3, nil,
			[]string{"api server refuses connections, waiting for it", "api server accepts connections again"}},
		{"refused, then another error", []error{errRefused, forbidden}, 2, forbidden,
			[]string{"api server refuses connections, waiting for it", "api server accepts connections again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(zap.InfoLevel)
			p := patience{logger: zap.New(core), kind: "Pod", first: time.Millisecond, max: 2 * time.Millisecond}
			calls := 0
			v, err := awaitServer(t.Context(), p, func() (int, error) {
				err := tt.results[min(calls, len(tt.results)-1)]
				calls++
				return calls, err
			})
			assert.Equal(t, tt.wantCalls, calls)
			assert.Equal(t, tt.wantCalls, v, "the last call's value")
			assert.Equal(t, tt.wantErr, err)
			var msgs []string
			for _, e := range logs.All() {
				msgs = append(msgs, e.Message)
				assert.Equal(t, "Pod", e.ContextMap()["kind"])
			}
			assert.Equal(t, tt.wantLogs, msgs)
		})
	}
}

func TestAwaitServerEndsWithItsContext(t *testing.T) {
	t.Parallel()
	p := patience{logger: zap.NewNop(), kind: "Pod", first: time.Hour, max: time.Hour}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := awaitServer(ctx, p, func() (struct{}, error) { return struct{}{}, errRefused })
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, syscall.ECONNREFUSED, "the last refusal")
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end with its context")
	}
}

// TestPatientListSurvivesAServerThatIsNotThereYet lists through a real
// client from a port nobody listens on until the first refusal was seen:
// the list returns what the server, once up, answers.
func TestPatientListSurvivesAServerThatIsNotThereYet(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	client, err := kubernetes.NewForConfigAndClient(&rest.Config{Host: "http://" + addr}, http.DefaultClient)
	require.NoError(t, err)
	core, logs := observer.New(zap.InfoLevel)
	p := patience{logger: zap.New(core), kind: "ReplicaSet", first: 10 * time.Millisecond, max: 50 * time.Millisecond}
	lw := p.wrap(listWatch(client.AppsV1().ReplicaSets("shop")))

	type result struct {
		rv  string
		err error
	}
	listed := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		if err != nil {
			listed <- result{err: err}
			return
		}
		acc, err := meta.ListAccessor(list)
		if err != nil {
			listed <- result{err: err}
			return
		}
		listed <- result{rv: acc.GetResourceVersion()}
	}()

	require.Eventually(t, func() bool {
		return logs.FilterMessage("api server refuses connections, waiting for it").Len() == 1
	}, 10*time.Second, 5*time.Millisecond, "the first list was refused")
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err, "listen again on %s", addr)
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7"},"items":[]}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	r := <-listed
	require.NoError(t, r.err)
	assert.Equal(t, "7", r.rv, "the server's list")
	assert.Equal(t, 1, logs.FilterMessage("api server accepts connections again").Len())
}
