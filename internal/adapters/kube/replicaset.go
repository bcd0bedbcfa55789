package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// FieldManager is the name the operator's writes are recorded under in
// metadata.managedFields.
const FieldManager = "hexagonal-operator"

// Kinds the writers report to ports.ObserveWrite, spelled as the sources of
// the same kinds name them.
const (
	KindReplicaSet = "ReplicaSet"
	KindPod        = "Pod"
)

// ReplicaSetWriter writes ReplicaSets through the API server.
type ReplicaSetWriter struct {
	client kubeclient.Interface
}

var _ ports.ReplicaSetLabeler = (*ReplicaSetWriter)(nil)

// NewReplicaSetWriter returns a writer using client.
func NewReplicaSetWriter(client kubeclient.Interface) (*ReplicaSetWriter, error) {
	if client == nil {
		return nil, errors.New("replicaset writer: a kubernetes client is required")
	}
	return &ReplicaSetWriter{client: client}, nil
}

// SetReplicaSetLabels sets labels on the ReplicaSet key with a JSON merge
// patch of metadata.labels. The patch carries no resourceVersion, so it
// never conflicts: labels and fields that others wrote meanwhile survive,
// and only the given keys change. An empty labels map writes nothing.
func (w *ReplicaSetWriter) SetReplicaSetLabels(ctx context.Context, key types.NamespacedName, labels map[string]string) error {
	if len(labels) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return fmt.Errorf("patch replicaset %s: encode labels: %w", key, err)
	}
	out, err := w.client.AppsV1().ReplicaSets(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("patch replicaset %s: %w", key, TranslateError(err))
	}
	ports.ObserveWrite(ctx, KindReplicaSet, out.ResourceVersion)
	return nil
}
