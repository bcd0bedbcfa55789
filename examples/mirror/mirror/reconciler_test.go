package mirror_test

import (
	"context"
	"errors"
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/examples/mirror/mirror"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/architecture"
)

const ns = "lobby"

var (
	sourceKey = types.NamespacedName{Namespace: ns, Name: "settings"}
	mirrorKey = types.NamespacedName{Namespace: ns, Name: "settings-mirror"}
)

func newConfigMaps() *memory.Store[*corev1.ConfigMap] {
	return memory.NewStore[*corev1.ConfigMap](schema.GroupKind{Kind: "ConfigMap"})
}

// newSource is the ConfigMap at sourceKey, labelled for a mirror when
// labelled.
func newSource(labelled bool, data map[string]string, binaryData map[string][]byte) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sourceKey.Name}, Data: data, BinaryData: binaryData}
	if labelled {
		cm.Labels = map[string]string{mirror.Label: "true", "team": "a"}
	}
	return cm
}

// controlledBy is the owner reference a mirror of the ConfigMap name with
// uid carries, written out by hand.
func controlledBy(name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: uid,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}}
}

// newMirror is a ConfigMap at mirrorKey with owners.
func newMirror(data map[string]string, owners []metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: mirrorKey.Name, OwnerReferences: owners},
		Data:       data,
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "settings-mirror", mirror.Name("settings"))
}

func TestLabelled(t *testing.T) {
	t.Parallel()
	for labels, want := range map[string]bool{
		"":                                  false,
		mirror.Label + "=true":              true,
		mirror.Label + "=false":             false,
		mirror.Label + "=True":              false,
		"other=true":                        false,
		"other=x," + mirror.Label:           false,
		"other=x," + mirror.Label + "=true": true,
	} {
		cm := &corev1.ConfigMap{}
		for kv := range strings.SplitSeq(labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				if cm.Labels == nil {
					cm.Labels = map[string]string{}
				}
				cm.Labels[k] = v
			}
		}
		assert.Equal(t, want, mirror.Labelled(cm), "labels %q", labels)
	}
	assert.False(t, mirror.Labelled(nil))
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	data := map[string]string{"a": "1", "b": "2"}
	binary := map[string][]byte{"blob": {0, 1, 2}}
	yes := true
	foreign := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "someone", UID: "pod-uid", Controller: &yes}}
	tests := []struct {
		name   string
		source *corev1.ConfigMap // stored first, when set
		// mirror is the mirror before, given the stored source (nil when
		// there is none).
		mirror    func(source *corev1.ConfigMap) *corev1.ConfigMap
		failWrite error
		// wantMirror is the mirror's data and binaryData after; nil when
		// it must be gone.
		wantMirror  *corev1.ConfigMap
		wantForeign bool // the mirror keeps the owners it had
		wantWrite   bool
		wantErr     func(error) bool
		wantErrText string
	}{
		{
			name:       "a labelled ConfigMap gets a mirror of its data and binary data",
			source:     newSource(true, data, binary),
			wantMirror: &corev1.ConfigMap{Data: data, BinaryData: binary},
			wantWrite:  true,
		},
		{
			name:   "a changed source updates its mirror",
			source: newSource(true, data, binary),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"a": "0", "gone": "x"}, controlledBy(s.Name, s.UID))
			},
			wantMirror: &corev1.ConfigMap{Data: data, BinaryData: binary},
			wantWrite:  true,
		},
		{
			name:   "an up-to-date mirror is not written",
			source: newSource(true, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"a": "1", "b": "2"}, controlledBy(s.Name, s.UID))
			},
			wantMirror: &corev1.ConfigMap{Data: data},
		},
		{
			name:       "an empty labelled ConfigMap gets an empty mirror",
			source:     newSource(true, nil, nil),
			wantMirror: &corev1.ConfigMap{},
			wantWrite:  true,
		},
		{
			name:   "removing the label deletes the mirror",
			source: newSource(false, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(data, controlledBy(s.Name, s.UID))
			},
			wantWrite: true,
		},
		{
			name: "a deleted source's mirror is deleted",
			mirror: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(data, controlledBy(sourceKey.Name, "gone-uid"))
			},
			wantWrite: true,
		},
		{
			name:   "an unlabelled ConfigMap without a mirror is left alone",
			source: newSource(false, data, nil),
		},
		{
			name: "neither source nor mirror is done",
		},
		{
			name:   "a mirror already deleted is done",
			source: newSource(false, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(data, controlledBy(s.Name, s.UID))
			},
			failWrite:  ports.ErrNotFound,
			wantMirror: &corev1.ConfigMap{Data: data}, // the injected failure kept it
		},
		{
			name:   "a ConfigMap of the mirror's name that the labelled source does not control is left alone",
			source: newSource(true, data, nil),
			mirror: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, foreign)
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
			wantErr:     ports.IsTerminal,
			wantErrText: "mirror lobby/settings-mirror: exists and is not controlled by configmap settings",
		},
		{
			name:   "nor one without owner",
			source: newSource(true, data, nil),
			mirror: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, nil)
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
			wantErr:     ports.IsTerminal,
		},
		{
			name:   "nor one of an earlier source of that name",
			source: newSource(true, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, controlledBy(s.Name, "earlier-uid"))
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
			wantErr:     ports.IsTerminal,
		},
		{
			name:   "an unlabelled source leaves alone a ConfigMap of the mirror's name it does not control, without error",
			source: newSource(false, data, nil),
			mirror: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, foreign)
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
		},
		{
			name:   "and one of an earlier source of that name is the garbage collector's",
			source: newSource(false, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, controlledBy(s.Name, "earlier-uid"))
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
		},
		{
			name: "a deleted source leaves alone a ConfigMap of the mirror's name it did not control",
			mirror: func(*corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"x": "y"}, foreign)
			},
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"x": "y"}},
			wantForeign: true,
		},
		{
			name:        "a mirror created meanwhile is retried",
			source:      newSource(true, data, nil),
			failWrite:   ports.ErrAlreadyExists,
			wantErr:     func(err error) bool { return errors.Is(err, ports.ErrAlreadyExists) && !ports.IsTerminal(err) },
			wantErrText: "create mirror lobby/settings-mirror",
		},
		{
			name:   "a conflict is retried",
			source: newSource(true, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(map[string]string{"a": "0"}, controlledBy(s.Name, s.UID))
			},
			failWrite:   ports.ErrConflict,
			wantMirror:  &corev1.ConfigMap{Data: map[string]string{"a": "0"}},
			wantErr:     func(err error) bool { return errors.Is(err, ports.ErrConflict) && !ports.IsTerminal(err) },
			wantErrText: "update mirror lobby/settings-mirror",
		},
		{
			name:        "an invalid mirror is terminal",
			source:      newSource(true, data, nil),
			failWrite:   ports.ErrInvalid,
			wantErr:     func(err error) bool { return errors.Is(err, ports.ErrInvalid) && ports.IsTerminal(err) },
			wantErrText: "create mirror lobby/settings-mirror",
		},
		{
			name:   "a failed delete is retried",
			source: newSource(false, data, nil),
			mirror: func(s *corev1.ConfigMap) *corev1.ConfigMap {
				return newMirror(data, controlledBy(s.Name, s.UID))
			},
			failWrite:   ports.ErrForbidden,
			wantMirror:  &corev1.ConfigMap{Data: data},
			wantErr:     func(err error) bool { return errors.Is(err, ports.ErrForbidden) && !ports.IsTerminal(err) },
			wantErrText: "delete mirror lobby/settings-mirror",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cms := newConfigMaps()
			var source *corev1.ConfigMap
			if tt.source != nil {
				var err error
				source, err = cms.Create(ctx, tt.source)
				require.NoError(t, err)
			}
			var before *corev1.ConfigMap
			if tt.mirror != nil {
				var err error
				before, err = cms.Create(ctx, tt.mirror(source))
				require.NoError(t, err)
			}
			if tt.failWrite != nil {
				cms.FailNextWrites(tt.failWrite)
			}
			r, err := mirror.NewReconciler(cms, cms)
			require.NoError(t, err)

			res, err := r.Reconcile(ctx, ports.Request{NamespacedName: sourceKey})

			assert.Zero(t, res)
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tt.wantErr(err), "unexpected error %v", err)
				assert.Contains(t, err.Error(), tt.wantErrText)
			} else {
				require.NoError(t, err)
			}
			if tt.source != nil {
				after, err := cms.Get(ctx, sourceKey)
				require.NoError(t, err)
				assert.Equal(t, source, after, "the source is never written")
			}
			got, err := cms.Get(ctx, mirrorKey)
			if tt.wantMirror == nil {
				assert.ErrorIs(t, err, ports.ErrNotFound, "no mirror")
				assert.Equal(t, tt.wantWrite, before != nil, "deleted only when there was one")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantMirror.Data, got.Data)
			assert.Equal(t, tt.wantMirror.BinaryData, got.BinaryData)
			assert.Empty(t, got.Labels, "a mirror carries no label, so it is never mirrored")
			switch {
			case tt.wantForeign:
				assert.Equal(t, before.OwnerReferences, got.OwnerReferences)
			case source != nil:
				assert.Equal(t, controlledBy(source.Name, source.UID), got.OwnerReferences)
			}
			assert.Equal(t, tt.wantWrite, before == nil || got.ResourceVersion != before.ResourceVersion, "written only when it differs")
		})
	}
}

// A second reconcile writes nothing; a mirror changed behind the
// controller's back, or deleted, is made again from the source.
func TestReconcileIsLevelBased(t *testing.T) {
	t.Parallel()
	ctx, req := context.Background(), ports.Request{NamespacedName: sourceKey}
	cms := newConfigMaps()
	r, err := mirror.NewReconciler(cms, cms)
	require.NoError(t, err)
	source, err := cms.Create(ctx, newSource(true, map[string]string{"a": "1"}, nil))
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	made, err := cms.Get(ctx, mirrorKey)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	again, err := cms.Get(ctx, mirrorKey)
	require.NoError(t, err)
	assert.Equal(t, made.ResourceVersion, again.ResourceVersion, "nothing written the second time")

	again.Data["a"] = "tampered"
	_, err = cms.Update(ctx, again)
	require.NoError(t, err)
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	restored, err := cms.Get(ctx, mirrorKey)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1"}, restored.Data)

	require.NoError(t, cms.Delete(ctx, mirrorKey, ""))
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	remade, err := cms.Get(ctx, mirrorKey)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1"}, remade.Data)
	assert.Equal(t, controlledBy(source.Name, source.UID), remade.OwnerReferences)
	assert.NotEqual(t, made.UID, remade.UID, "a new mirror")
}

// The mirror holds copies: changing what the reader handed out (the
// cache's objects, in the operator) after a reconcile changes no mirror,
// and the reconcile changed no source.
func TestReconcileCopiesWhatItReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cms := newConfigMaps()
	source, err := cms.Create(ctx, newSource(true, map[string]string{"a": "1"}, map[string][]byte{"b": {1}}))
	require.NoError(t, err)
	shared := sharedReader{cms: cms, source: source}
	r, err := mirror.NewReconciler(shared, cms)
	require.NoError(t, err)

	_, err = r.Reconcile(ctx, ports.Request{NamespacedName: sourceKey})
	require.NoError(t, err)

	assert.Equal(t, map[string]string{"a": "1"}, source.Data, "the cached source is unchanged")
	assert.Empty(t, source.OwnerReferences)
	source.Data["a"] = "changed in the cache"
	source.BinaryData["b"][0] = 9
	got, err := cms.Get(ctx, mirrorKey)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1"}, got.Data)
	assert.Equal(t, map[string][]byte{"b": {1}}, got.BinaryData)
}

// sharedReader hands out one object for the source, as the cache does,
// and reads anything else from the store.
type sharedReader struct {
	cms    *memory.Store[*corev1.ConfigMap]
	source *corev1.ConfigMap
}

func (s sharedReader) Get(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
	if key == sourceKey {
		return s.source, nil
	}
	return s.cms.Get(ctx, key)
}

func (s sharedReader) List(ctx context.Context, namespace string, opts ...ports.ListOption) ([]*corev1.ConfigMap, error) {
	return s.cms.List(ctx, namespace, opts...)
}

func TestReconcileReportsReadErrors(t *testing.T) {
	t.Parallel()
	stopped := errors.New("cache stopped")
	cms := newConfigMaps()
	for name, tt := range map[string]struct {
		failOn types.NamespacedName
		want   string
	}{
		"of the source": {failOn: sourceKey, want: "get configmap lobby/settings: cache stopped"},
		"of the mirror": {failOn: mirrorKey, want: "get mirror lobby/settings-mirror: cache stopped"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := mirror.NewReconciler(failingReader{cms: cms, key: tt.failOn, err: stopped}, cms)
			require.NoError(t, err)
			_, err = r.Reconcile(context.Background(), ports.Request{NamespacedName: sourceKey})
			require.ErrorIs(t, err, stopped)
			assert.False(t, ports.IsTerminal(err), "retried")
			assert.EqualError(t, err, tt.want)
		})
	}
}

// failingReader fails reads of key with err.
type failingReader struct {
	cms *memory.Store[*corev1.ConfigMap]
	key types.NamespacedName
	err error
}

func (f failingReader) Get(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
	if key == f.key {
		return nil, f.err
	}
	return f.cms.Get(ctx, key)
}

func (f failingReader) List(context.Context, string, ...ports.ListOption) ([]*corev1.ConfigMap, error) {
	return nil, f.err
}

func TestNewReconcilerNeedsItsPorts(t *testing.T) {
	t.Parallel()
	cms := newConfigMaps()
	_, err := mirror.NewReconciler(nil, cms)
	assert.Error(t, err, "without reader")
	_, err = mirror.NewReconciler(cms, nil)
	assert.Error(t, err, "without writer")
	_, err = mirror.NewReconciler(cms, cms)
	assert.NoError(t, err)
}

// The package keeps to the rule the architecture test applies to
// internal/domain: ports, API types and the standard library only.
func TestImportsFollowTheDomainRule(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	const module = "github.com/hexagonal-operator/operator"
	violations := architecture.Check(module, []architecture.Package{
		{ImportPath: module + "/internal/domain/mirror", Imports: pkg.Imports},
	})
	assert.Empty(t, violations)
	assert.Contains(t, pkg.Imports, module+"/internal/ports")
}
