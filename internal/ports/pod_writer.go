package ports

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWriter knows how to create and delete Pods.
//
// CreatePod creates pod as given (the caller sets name, namespace and owner
// references) and returns it as stored; a Pod of that name is
// [ErrAlreadyExists]. DeletePod deletes the Pod key only while it still has
// uid (so a newer Pod of the same name is never deleted by mistake); an
// empty uid deletes whatever is there. A missing Pod, or one with another
// UID, is [ErrNotFound] or [ErrConflict].
type PodWriter interface {
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	DeletePod(ctx context.Context, key types.NamespacedName, uid types.UID) error
}
