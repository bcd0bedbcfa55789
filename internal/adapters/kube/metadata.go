package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// MetadataPatcher writes the metadata of one resource's objects through
// the metadata client, which speaks to every resource alike, custom ones
// included: one type serves every kind, with no typed client for it.
type MetadataPatcher struct {
	client   metadata.Interface
	resource schema.GroupVersionResource
	what     string // the resource as kubectl names it, for errors
	kind     string // reported to ports.ObserveWrite; empty: not reported
}

var _ ports.AnnotationWriter = (*MetadataPatcher)(nil)

// NewMetadataPatcher returns a patcher of the objects of resource, using
// client. It does no I/O: a resource the API server does not serve fails on
// the first write.
func NewMetadataPatcher(client metadata.Interface, resource schema.GroupVersionResource) (*MetadataPatcher, error) {
	if client == nil {
		return nil, errors.New("metadata patcher: a metadata client is required")
	}
	if resource.Version == "" || resource.Resource == "" {
		return nil, fmt.Errorf("metadata patcher %q: version and resource are required", resource.String())
	}
	return &MetadataPatcher{client: client, resource: resource, what: resource.GroupResource().String()}, nil
}

// ReportingKind makes the patcher report its writes to ports.ObserveWrite
// as kind, the name the kind's source goes by, so that the controller reads
// its own writes (see package controller). It returns p.
func (p *MetadataPatcher) ReportingKind(kind string) *MetadataPatcher {
	p.kind = kind
	return p
}

// SetAnnotations implements ports.AnnotationWriter with a JSON merge patch
// of metadata.annotations. The patch carries no resourceVersion, so it
// never conflicts: annotations and fields that others wrote meanwhile
// survive, and only the given keys change. An empty map writes nothing.
// For a cluster-scoped resource key.Namespace is empty.
func (p *MetadataPatcher) SetAnnotations(ctx context.Context, key types.NamespacedName, annotations map[string]string) error {
	if len(annotations) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("patch %s %s: encode annotations: %w", p.what, key, err)
	}
	out, err := p.client.Resource(p.resource).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("patch %s %s: %w", p.what, key, TranslateError(err))
	}
	if p.kind != "" {
		ports.ObserveWrite(ctx, p.kind, out.GetResourceVersion())
	}
	return nil
}
