package kube

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// ChaosPodWriter writes v1 ChaosPods through the API server's dynamic
// client: a typed clientset for one kind is not worth a code generator
// here, and unstructured⇄typed is a lossless, reflection-based step.
type ChaosPodWriter struct {
	client dynamic.Interface
}

var _ ports.ChaosPodWriter = (*ChaosPodWriter)(nil)

// NewChaosPodWriter returns a writer using client.
func NewChaosPodWriter(client dynamic.Interface) (*ChaosPodWriter, error) {
	if client == nil {
		return nil, errors.New("chaospod writer: a dynamic client is required")
	}
	return &ChaosPodWriter{client: client}, nil
}

// UpdateChaosPod updates metadata and spec with the object's
// resourceVersion (a PUT): a stale one is ports.ErrConflict.
func (w *ChaosPodWriter) UpdateChaosPod(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
	return w.update(ctx, obj, "")
}

// UpdateChaosPodStatus updates the status subresource with the object's
// resourceVersion: a stale one is ports.ErrConflict.
func (w *ChaosPodWriter) UpdateChaosPodStatus(ctx context.Context, obj *chaosv1.ChaosPod) (*chaosv1.ChaosPod, error) {
	return w.update(ctx, obj, "status")
}

func (w *ChaosPodWriter) update(ctx context.Context, obj *chaosv1.ChaosPod, subresource string) (*chaosv1.ChaosPod, error) {
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	what := "chaospod"
	if subresource != "" {
		what += " " + subresource
	}
	u, err := ChaosPodToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("update %s %s: %w", what, key, err)
	}
	res := w.client.Resource(chaosv1.GroupVersionResource).Namespace(obj.Namespace)
	var out *unstructured.Unstructured
	opts := metav1.UpdateOptions{FieldManager: FieldManager}
	if subresource == "" {
		out, err = res.Update(ctx, u, opts)
	} else {
		out, err = res.UpdateStatus(ctx, u, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("update %s %s: %w", what, key, TranslateError(err))
	}
	ports.ObserveWrite(ctx, chaosv1.Kind, out.GetResourceVersion())
	typed, err := ChaosPodFromUnstructured(out)
	if err != nil {
		return nil, fmt.Errorf("update %s %s: %w", what, key, err)
	}
	return typed, nil
}

// ChaosPodToUnstructured converts a v1 ChaosPod, with its apiVersion and
// kind set, to the dynamic client's form.
func ChaosPodToUnstructured(obj *chaosv1.ChaosPod) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert chaospod to unstructured: %w", err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(chaosv1.SchemeGroupVersion.String())
	u.SetKind(chaosv1.Kind)
	return u, nil
}

// ChaosPodFromUnstructured converts the dynamic client's form to a v1
// ChaosPod.
func ChaosPodFromUnstructured(u *unstructured.Unstructured) (*chaosv1.ChaosPod, error) {
	var obj chaosv1.ChaosPod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
		return nil, fmt.Errorf("convert unstructured to chaospod: %w", err)
	}
	return &obj, nil
}
