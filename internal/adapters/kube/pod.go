package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// PodWriter creates and deletes Pods through the API server.
type PodWriter struct {
	client kubeclient.Interface
}

var _ ports.PodWriter = (*PodWriter)(nil)

// NewPodWriter returns a writer using client.
func NewPodWriter(client kubeclient.Interface) (*PodWriter, error) {
	if client == nil {
		return nil, errors.New("pod writer: a kubernetes client is required")
	}
	return &PodWriter{client: client}, nil
}

// CreatePod creates pod as given.
func (w *PodWriter) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	out, err := w.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("create pod %s: %w", key, TranslateError(err))
	}
	ports.ObserveWrite(ctx, KindPod, out.ResourceVersion)
	return out, nil
}

// DeletePod deletes the Pod key with a UID precondition when uid is set: a
// Pod of that name with another UID is ports.ErrConflict.
func (w *PodWriter) DeletePod(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if err := w.client.CoreV1().Pods(key.Namespace).Delete(ctx, key.Name, opts); err != nil {
		return fmt.Errorf("delete pod %s: %w", key, TranslateError(err))
	}
	return nil
}
