package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// ReplicaSetStore is the twin of the ReplicaSet cache and writer together:
// one store of ReplicaSets behind ports.ReplicaSetReader and
// ports.ReplicaSetLabeler, whose changes go to [ReplicaSetStore.Source].
// Unlike a cache it never lags: a write is visible to the next read.
type ReplicaSetStore struct {
	source *Source

	mu       sync.Mutex // guards what follows
	items    map[types.NamespacedName]*appsv1.ReplicaSet
	version  uint64 // last resourceVersion handed out, store-wide like etcd's
	labelErr error
}

var (
	_ ports.ReplicaSetReader  = (*ReplicaSetStore)(nil)
	_ ports.ReplicaSetLabeler = (*ReplicaSetStore)(nil)
)

// NewReplicaSetStore returns an empty store.
func NewReplicaSetStore() *ReplicaSetStore {
	return &ReplicaSetStore{
		source: NewSource("ReplicaSet"),
		items:  map[types.NamespacedName]*appsv1.ReplicaSet{},
	}
}

// Source delivers the store's changes, as the ReplicaSet informer would.
func (s *ReplicaSetStore) Source() *Source { return s.source }

// GetReplicaSet implements ports.ReplicaSetReader. It returns a copy.
func (s *ReplicaSetStore) GetReplicaSet(ctx context.Context, key types.NamespacedName) (*appsv1.ReplicaSet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Get(key)
}

// SetReplicaSetLabels implements ports.ReplicaSetLabeler as a merge of
// labels into the stored ReplicaSet: other labels and fields stay, and
// nothing is written (no new resourceVersion, no event) when every label
// already has its value.
func (s *ReplicaSetStore) SetReplicaSetLabels(ctx context.Context, key types.NamespacedName, labels map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.labelErr != nil {
		err := s.labelErr
		s.mu.Unlock()
		return fmt.Errorf("patch replicaset %s: %w", key, err)
	}
	cur, ok := s.items[key]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("patch replicaset %s: %w", key, ports.ErrNotFound)
	}
	merged := maps.Clone(cur.Labels)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, labels)
	if len(labels) == 0 || maps.Equal(merged, cur.Labels) {
		s.mu.Unlock()
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = merged
	s.commitLocked(cur, next)
	return nil
}

// FailSetLabels makes every SetReplicaSetLabels fail with err (wrapped)
// until it is called again with nil; for testing how callers handle write
// errors such as ports.ErrInvalid or ports.ErrForbidden.
func (s *ReplicaSetStore) FailSetLabels(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.labelErr = err
}

// Create stores a copy of rs and returns the stored state, with a new
// resourceVersion, a UID, generation 1 and a creation time. A ReplicaSet of
// that name is ports.ErrAlreadyExists; one without a name ports.ErrInvalid.
func (s *ReplicaSetStore) Create(rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	if rs == nil || rs.Name == "" {
		return nil, fmt.Errorf("create replicaset: name is required: %w", ports.ErrInvalid)
	}
	key := types.NamespacedName{Namespace: rs.Namespace, Name: rs.Name}
	s.mu.Lock()
	if _, ok := s.items[key]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("create replicaset %s: %w", key, ports.ErrAlreadyExists)
	}
	next := rs.DeepCopy()
	next.UID = types.UID(fmt.Sprintf("memory-uid-%d", s.version+1))
	next.Generation = 1
	next.CreationTimestamp = metav1.NewTime(time.Now().Truncate(time.Second))
	s.commitLocked(nil, next)
	return next.DeepCopy(), nil
}

// Update replaces the stored ReplicaSet with a copy of rs, as a PUT does:
// a non-empty resourceVersion must be the stored one (ports.ErrConflict
// otherwise), an empty one overwrites unconditionally. A spec change bumps
// the generation; an update that changes nothing writes nothing. A missing
// ReplicaSet is ports.ErrNotFound.
func (s *ReplicaSetStore) Update(rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	if rs == nil {
		return nil, fmt.Errorf("update replicaset: %w", ports.ErrInvalid)
	}
	key := types.NamespacedName{Namespace: rs.Namespace, Name: rs.Name}
	s.mu.Lock()
	cur, ok := s.items[key]
	switch {
	case !ok:
		s.mu.Unlock()
		return nil, fmt.Errorf("update replicaset %s: %w", key, ports.ErrNotFound)
	case rs.ResourceVersion != "" && rs.ResourceVersion != cur.ResourceVersion:
		s.mu.Unlock()
		return nil, fmt.Errorf("update replicaset %s: resourceVersion %s is not the stored %s: %w",
			key, rs.ResourceVersion, cur.ResourceVersion, ports.ErrConflict)
	}
	next := rs.DeepCopy()
	// Fields the server owns.
	next.UID, next.CreationTimestamp, next.Generation = cur.UID, cur.CreationTimestamp, cur.Generation
	next.ResourceVersion = cur.ResourceVersion
	if equality.Semantic.DeepEqual(next, cur) {
		s.mu.Unlock()
		return cur.DeepCopy(), nil
	}
	if !equality.Semantic.DeepEqual(next.Spec, cur.Spec) {
		next.Generation++
	}
	s.commitLocked(cur, next)
	return next.DeepCopy(), nil
}

// Delete removes the ReplicaSet key; a missing one is ports.ErrNotFound.
func (s *ReplicaSetStore) Delete(key types.NamespacedName) error {
	s.mu.Lock()
	cur, ok := s.items[key]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("delete replicaset %s: %w", key, ports.ErrNotFound)
	}
	s.commitLocked(cur, nil)
	return nil
}

// Get returns a copy of the stored ReplicaSet key, or ports.ErrNotFound.
func (s *ReplicaSetStore) Get(key types.NamespacedName) (*appsv1.ReplicaSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, ok := s.items[key]
	if !ok {
		return nil, fmt.Errorf("replicaset %s: %w", key, ports.ErrNotFound)
	}
	return rs.DeepCopy(), nil
}

// List returns copies of every stored ReplicaSet, sorted by namespace and
// name.
func (s *ReplicaSetStore) List() []*appsv1.ReplicaSet {
	s.mu.Lock()
	out := make([]*appsv1.ReplicaSet, 0, len(s.items))
	for _, rs := range s.items {
		out = append(out, rs.DeepCopy())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *appsv1.ReplicaSet) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// commitLocked stores next in place of cur (either may be nil: a creation,
// a deletion), then tells the source. It is called with s.mu held and
// releases it, handing over to the source's delivery lock first so that
// notifications keep the order of the writes while handlers may still read
// the store.
func (s *ReplicaSetStore) commitLocked(cur, next *appsv1.ReplicaSet) {
	var old *appsv1.ReplicaSet
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
