package confighash_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"go/build"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/examples/configmap/confighash"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/architecture"
)

var key = types.NamespacedName{Namespace: "shop", Name: "settings"}

// sha is the expected hash of an encoding written out by hand, so the
// tests pin the format rather than repeat the implementation.
func sha(encoding string) string {
	sum := sha256.Sum256([]byte(encoding))
	return hex.EncodeToString(sum[:])
}

func TestHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		data       map[string]string
		binaryData map[string][]byte
		want       string
	}{
		{name: "keys sorted", data: map[string]string{"b": "2", "a": "1"}, want: `{"data":{"a":"1","b":"2"}}`},
		{name: "binary as base64", binaryData: map[string][]byte{"bin": {0, 1, 2}}, want: `{"binaryData":{"bin":"AAEC"}}`},
		{
			name:       "both, data first",
			data:       map[string]string{"greeting": "hello"},
			binaryData: map[string][]byte{"bin": {0, 1, 2}},
			want:       `{"data":{"greeting":"hello"},"binaryData":{"bin":"AAEC"}}`,
		},
		{name: "no content", want: `{}`},
		{name: "empty maps hash like none", data: map[string]string{}, binaryData: map[string][]byte{}, want: `{}`},
		{name: "no HTML escaping", data: map[string]string{"x": "<&>"}, want: `{"data":{"x":"<&>"}}`},
		{name: "newlines escaped", data: map[string]string{"f": "a\nb"}, want: `{"data":{"f":"a\nb"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, sha(tt.want), confighash.Hash(tt.data, tt.binaryData))
		})
	}
	assert.NotEqual(t,
		confighash.Hash(map[string]string{"a": "AAEC"}, nil),
		confighash.Hash(nil, map[string][]byte{"a": {0, 1, 2}}),
		"data and binaryData are told apart")
}

func configMap(annotations map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Annotations: annotations},
		Data:       data,
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	data := map[string]string{"color": "blue"}
	hash := sha(`{"data":{"color":"blue"}}`)
	tests := []struct {
		name            string
		existing        *corev1.ConfigMap
		failWrite       error
		wantAnnotations map[string]string
		wantEvents      []string
		wantErr         func(error) bool
		wantWrite       bool
	}{
		{
			name:            "missing hash is stamped and other annotations kept",
			existing:        configMap(map[string]string{"team": "payments"}, data),
			wantAnnotations: map[string]string{"team": "payments", confighash.Annotation: hash},
			wantEvents:      []string{confighash.ReasonHashStamped},
			wantWrite:       true,
		},
		{
			name:            "stale hash is replaced",
			existing:        configMap(map[string]string{confighash.Annotation: sha(`{"data":{"color":"red"}}`)}, data),
			wantAnnotations: map[string]string{confighash.Annotation: hash},
			wantEvents:      []string{confighash.ReasonHashStamped},
			wantWrite:       true,
		},
		{
			name:            "empty ConfigMap is stamped too",
			existing:        configMap(nil, nil),
			wantAnnotations: map[string]string{confighash.Annotation: sha(`{}`)},
			wantEvents:      []string{confighash.ReasonHashStamped},
			wantWrite:       true,
		},
		{
			name:            "right hash writes nothing",
			existing:        configMap(map[string]string{confighash.Annotation: hash, "team": "payments"}, data),
			wantAnnotations: map[string]string{confighash.Annotation: hash, "team": "payments"},
		},
		{
			name: "gone is done",
		},
		{
			name:      "deleted between read and write is done",
			existing:  configMap(nil, data),
			failWrite: ports.ErrNotFound,
		},
		{
			name:      "invalid write is terminal",
			existing:  configMap(nil, data),
			failWrite: ports.ErrInvalid,
			wantErr:   ports.IsTerminal,
		},
		{
			name:      "forbidden is retried",
			existing:  configMap(nil, data),
			failWrite: ports.ErrForbidden,
			wantErr:   func(err error) bool { return errors.Is(err, ports.ErrForbidden) && !ports.IsTerminal(err) },
		},
		{
			name:      "transient failure is retried",
			existing:  configMap(nil, data),
			failWrite: errors.New("connection reset"),
			wantErr:   func(err error) bool { return err != nil && !ports.IsTerminal(err) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := memory.NewStore[*corev1.ConfigMap](configMapKind)
			events := memory.NewEventRecorder()
			var before string
			if tt.existing != nil {
				created, err := store.Create(context.Background(), tt.existing)
				require.NoError(t, err)
				before = created.ResourceVersion
			}
			if tt.failWrite != nil {
				store.FailNextWrites(tt.failWrite)
			}
			r, err := confighash.New(store, store, events)
			require.NoError(t, err)

			res, err := r.Reconcile(context.Background(), ports.Request{NamespacedName: key})

			assert.Zero(t, res)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tt.wantErr(err), "unexpected error %v", err)
				assert.Contains(t, err.Error(), "stamp configmap shop/settings")
			} else {
				require.NoError(t, err)
			}
			assert.ElementsMatch(t, tt.wantEvents, events.Reasons())
			if tt.existing == nil || tt.failWrite != nil {
				return
			}
			got, err := store.Get(context.Background(), key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAnnotations, got.Annotations)
			assert.Equal(t, tt.existing.Data, got.Data, "data untouched")
			assert.Equal(t, tt.wantWrite, got.ResourceVersion != before, "written only when the hash differs")
		})
	}
}

// A second reconcile of a stamped ConfigMap is a no-op, and an edit of its
// data is noticed.
func TestReconcileIsLevelBased(t *testing.T) {
	t.Parallel()
	store := memory.NewStore[*corev1.ConfigMap](configMapKind)
	events := memory.NewEventRecorder()
	r, err := confighash.New(store, store, events)
	require.NoError(t, err)
	_, err = store.Create(context.Background(), configMap(nil, map[string]string{"v": "1"}))
	require.NoError(t, err)
	ctx, req := context.Background(), ports.Request{NamespacedName: key}

	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	stamped, err := store.Get(context.Background(), key)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	again, err := store.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, stamped.ResourceVersion, again.ResourceVersion, "nothing written the second time")

	again.Data["v"] = "2"
	_, err = store.Update(context.Background(), again)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	edited, err := store.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, sha(`{"data":{"v":"2"}}`), edited.Annotations[confighash.Annotation])
	assert.Equal(t, []string{confighash.ReasonHashStamped, confighash.ReasonHashStamped}, events.Reasons())
	assert.Equal(t, []memory.Event{{
		Kind: "ConfigMap", Regarding: key, Type: ports.EventTypeNormal, Reason: confighash.ReasonHashStamped,
		Action: "Annotate", Note: "Set annotation " + confighash.Annotation + "=" + sha(`{"data":{"v":"2"}}`),
	}}, events.Events()[1:])
}

func TestReconcileReportsReadErrors(t *testing.T) {
	t.Parallel()
	r, err := confighash.New(failingReader{errors.New("cache stopped")}, memory.NewStore[*corev1.ConfigMap](configMapKind), memory.NewEventRecorder())
	require.NoError(t, err)

	_, err = r.Reconcile(context.Background(), ports.Request{NamespacedName: key})

	require.Error(t, err)
	assert.Contains(t, err.Error(), "get configmap shop/settings: cache stopped")
	assert.False(t, ports.IsTerminal(err))
}

func TestReconcileDoesNotMutateTheCachedObject(t *testing.T) {
	t.Parallel()
	cached := configMap(map[string]string{"team": "payments"}, map[string]string{"a": "1"})
	r, err := confighash.New(staticReader{cached}, memory.NewStore[*corev1.ConfigMap](configMapKind), memory.NewEventRecorder())
	require.NoError(t, err)

	_, _ = r.Reconcile(context.Background(), ports.Request{NamespacedName: key})

	assert.Equal(t, map[string]string{"team": "payments"}, cached.Annotations)
}

func TestNewRequiresEveryPort(t *testing.T) {
	t.Parallel()
	store := memory.NewStore[*corev1.ConfigMap](configMapKind)
	for name, build := range map[string]func() (*confighash.Reconciler, error){
		"reader": func() (*confighash.Reconciler, error) { return confighash.New(nil, store, memory.NewEventRecorder()) },
		"writer": func() (*confighash.Reconciler, error) { return confighash.New(store, nil, memory.NewEventRecorder()) },
		"events": func() (*confighash.Reconciler, error) { return confighash.New(store, store, nil) },
	} {
		_, err := build()
		assert.Error(t, err, "without %s", name)
	}
}

// The package keeps to the rule the architecture test applies to
// internal/domain: ports, API types and the standard library only.
func TestImportsFollowTheDomainRule(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	require.NotEmpty(t, pkg.Imports)
	const module = "github.com/hexagonal-operator/operator"
	violations := architecture.Check(module, []architecture.Package{
		{ImportPath: module + "/internal/domain/confighash", Imports: pkg.Imports},
	})
	assert.Empty(t, violations)
	assert.Contains(t, pkg.Imports, module+"/internal/ports")
}

type staticReader struct{ cm *corev1.ConfigMap }

func (s staticReader) Get(context.Context, types.NamespacedName) (*corev1.ConfigMap, error) {
	return s.cm, nil
}

func (s staticReader) List(context.Context, string, ...ports.ListOption) ([]*corev1.ConfigMap, error) {
	return []*corev1.ConfigMap{s.cm}, nil
}

type failingReader struct{ err error }

func (f failingReader) Get(context.Context, types.NamespacedName) (*corev1.ConfigMap, error) {
	return nil, f.err
}

func (f failingReader) List(context.Context, string, ...ports.ListOption) ([]*corev1.ConfigMap, error) {
	return nil, f.err
}

var configMapKind = corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind()
