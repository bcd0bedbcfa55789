package memory

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// PodStore is the twin of the Pod cache and writer together: Pods behind
// ports.PodReader (metadata only, as the cache keeps them) and
// ports.PodWriter, whose changes go to [PodStore.Source] as
// *metav1.PartialObjectMetadata. Creation times come from the clock given
// to NewPodStore, so tests with a fake clock see consistent times.
type PodStore struct {
	source *Source
	clock  ports.Clock

	mu      sync.Mutex // guards what follows
	items   map[types.NamespacedName]*corev1.Pod
	version uint64
}

var (
	_ ports.PodReader = (*PodStore)(nil)
	_ ports.PodWriter = (*PodStore)(nil)
)

// NewPodStore returns an empty store stamping creation times from clock
// (nil: the wall clock).
func NewPodStore(clock ports.Clock) *PodStore {
	return &PodStore{source: NewSource("Pod"), clock: clock, items: map[types.NamespacedName]*corev1.Pod{}}
}

// Source delivers the store's changes, as the metadata Pod informer would.
func (s *PodStore) Source() *Source { return s.source }

// GetPod implements ports.PodReader.
func (s *PodStore) GetPod(ctx context.Context, key types.NamespacedName) (*metav1.PartialObjectMetadata, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.items[key]
	if !ok {
		return nil, fmt.Errorf("pod %s: %w", key, ports.ErrNotFound)
	}
	return podMetadata(p), nil
}

// CreatePod implements ports.PodWriter.
func (s *PodStore) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if pod == nil || pod.Name == "" {
		return nil, fmt.Errorf("create pod: name is required: %w", ports.ErrInvalid)
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	s.mu.Lock()
	if _, ok := s.items[key]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("create pod %s: %w", key, ports.ErrAlreadyExists)
	}
	now := time.Now()
	if s.clock != nil {
		now = s.clock.Now()
	}
	next := pod.DeepCopy()
	s.version++
	next.UID = types.UID(fmt.Sprintf("memory-pod-uid-%d", s.version))
	next.ResourceVersion = strconv.FormatUint(s.version, 10)
	next.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
	s.items[key] = next
	out := next.DeepCopy()
	s.deliverLocked(nil, next)
	return out, nil
}

// DeletePod implements ports.PodWriter.
func (s *PodStore) DeletePod(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	cur, ok := s.items[key]
	switch {
	case !ok:
		s.mu.Unlock()
		return fmt.Errorf("delete pod %s: %w", key, ports.ErrNotFound)
	case uid != "" && cur.UID != uid:
		s.mu.Unlock()
		return fmt.Errorf("delete pod %s: uid %s is not the stored %s: %w", key, uid, cur.UID, ports.ErrConflict)
	}
	delete(s.items, key)
	s.deliverLocked(cur, nil)
	return nil
}

// List returns copies of every stored Pod.
func (s *PodStore) List() []*corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(s.items))
	for _, p := range s.items {
		out = append(out, p.DeepCopy())
	}
	return out
}

// deliverLocked tells the source about a creation (old nil) or deletion
// (next nil), in write order; called with s.mu held, it releases it.
func (s *PodStore) deliverLocked(old, next *corev1.Pod) {
	s.source.deliver.Lock()
	s.mu.Unlock()
	defer s.source.deliver.Unlock()
	if old == nil {
		s.source.add(podMetadata(next))
		return
	}
	s.source.delete(podMetadata(old))
}

func podMetadata(p *corev1.Pod) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: *p.ObjectMeta.DeepCopy(),
	}
}
