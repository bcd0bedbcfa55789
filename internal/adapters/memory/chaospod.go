package memory

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ChaosPodStore is the twin of the ChaosPod cache and writer together: one
// store of v1 ChaosPods behind ports.ChaosPodReader and
// ports.ChaosPodWriter, whose changes go to [ChaosPodStore.Source]. Like the
// API server, spec updates ignore status and status updates ignore
// everything else, and both conflict on a stale resourceVersion.
type ChaosPodStore struct {
	source *Source

	mu        sync.Mutex // guards what follows
	items     map[types.NamespacedName]*chaosv1.ChaosPod
	version   uint64
	conflicts int // the next n writes fail with ErrConflict
}

var (
	_ ports.ChaosPodReader = (*ChaosPodStore)(nil)
	_ ports.ChaosPodWriter = (*ChaosPodStore)(nil)
)

// NewChaosPodStore returns an empty store.
func NewChaosPodStore() *ChaosPodStore {
	return &ChaosPodStore{source: NewSource(chaosv1.Kind), items: map[types.NamespacedName]*chaosv1.ChaosPod{}}
}

// Source delivers the store's changes, as the ChaosPod informer would.
func (s *ChaosPodStore) Source() *Source { return s.source }

// GetChaosPod implements ports.ChaosPodReader. It returns a copy.
func (s *ChaosPodStore) GetChaosPod(ctx context.Context, key types.NamespacedName) (*chaosv1.ChaosPod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Get(key)
}

// UpdateChaosPod implements ports.ChaosPodWriter: metadata and spec.
func (s *ChaosPodStore) UpdateChaosPod(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
	return s.update(ctx, obj, false)
}

// UpdateChaosPodStatus implements ports.ChaosPodWriter: status only.
func (s *ChaosPodStore) UpdateChaosPodStatus(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
	return s.update(ctx, obj, true)
}

// FailNextWrites makes the next n writes fail with ports.ErrConflict, as if
// someone else had written first; for testing retries.
func (s *ChaosPodStore) FailNextWrites(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflicts = n
}

func (s *ChaosPodStore) update(ctx context.Context, obj *chaosv1.ChaosPod, status bool) (*chaosv1.ChaosPod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	what := "chaospod"
	if status {
		what = "chaospod status"
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	s.mu.Lock()
	cur, ok := s.items[key]
	switch {
	case !ok:
		s.mu.Unlock()
		return nil, fmt.Errorf("update %s %s: %w", what, key, ports.ErrNotFound)
	case s.conflicts > 0:
		s.conflicts--
		s.mu.Unlock()
		return nil, fmt.Errorf("update %s %s: injected: %w", what, key, ports.ErrConflict)
	case obj.ResourceVersion != cur.ResourceVersion:
		s.mu.Unlock()
		return nil, fmt.Errorf("update %s %s: resourceVersion %s is not the stored %s: %w",
			what, key, obj.ResourceVersion, cur.ResourceVersion, ports.ErrConflict)
	}
	next := cur.DeepCopy()
	if status {
		next.Status = *obj.Status.DeepCopy()
	} else {
		status := next.Status
		next = obj.DeepCopy()
		next.Status = status
		next.UID, next.CreationTimestamp, next.Generation = cur.UID, cur.CreationTimestamp, cur.Generation
		if !equality.Semantic.DeepEqual(next.Spec, cur.Spec) {
			next.Generation++
		}
	}
	if equality.Semantic.DeepEqual(next, cur) {
		s.mu.Unlock()
		return cur.DeepCopy(), nil
	}
	s.commitLocked(cur, next)
	return next.DeepCopy(), nil
}

// Create stores a copy of obj (status included) with a new resourceVersion,
// UID, generation 1 and creation time. A ChaosPod of that name is
// ports.ErrAlreadyExists.
func (s *ChaosPodStore) Create(obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
	if obj == nil || obj.Name == "" {
		return nil, fmt.Errorf("create chaospod: name is required: %w", ports.ErrInvalid)
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	s.mu.Lock()
	if _, ok := s.items[key]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("create chaospod %s: %w", key, ports.ErrAlreadyExists)
	}
	next := obj.DeepCopy()
	next.UID = types.UID(fmt.Sprintf("memory-chaospod-uid-%d", s.version+1))
	next.Generation = 1
	next.CreationTimestamp = metav1.NewTime(time.Now().Truncate(time.Second))
	s.commitLocked(nil, next)
	return next.DeepCopy(), nil
}

// Delete removes the ChaosPod key; a missing one is ports.ErrNotFound.
func (s *ChaosPodStore) Delete(key types.NamespacedName) error {
	s.mu.Lock()
	cur, ok := s.items[key]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("delete chaospod %s: %w", key, ports.ErrNotFound)
	}
	s.commitLocked(cur, nil)
	return nil
}

// Get returns a copy of the stored ChaosPod key, or ports.ErrNotFound.
func (s *ChaosPodStore) Get(key types.NamespacedName) (*chaosv1.ChaosPod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.items[key]
	if !ok {
		return nil, fmt.Errorf("chaospod %s: %w", key, ports.ErrNotFound)
	}
	return obj.DeepCopy(), nil
}

// commitLocked stores next in place of cur (either may be nil), then tells
// the source, in write order; it is called with s.mu held and releases it.
func (s *ChaosPodStore) commitLocked(cur, next *chaosv1.ChaosPod) {
	var old *chaosv1.ChaosPod
	if cur != nil {
		old = cur.DeepCopy()
	}
	if next != nil {
		s.version++
		next.ResourceVersion = strconv.FormatUint(s.version, 10)
		s.items[types.NamespacedName{Namespace: next.Namespace, Name: next.Name}] = next
		next = next.DeepCopy()
	} else {
		delete(s.items, types.NamespacedName{Namespace: cur.Namespace, Name: cur.Name})
	}
	s.source.deliver.Lock()
	s.mu.Unlock()
	defer s.source.deliver.Unlock()
	switch {
	case old == nil:
		s.source.add(next)
	case next == nil:
		s.source.delete(old)
	default:
		s.source.update(old, next)
	}
}
