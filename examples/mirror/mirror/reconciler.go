package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Label asks for a mirror of the ConfigMap that carries it with the value
// "true".
const Label = "example.test/mirror"

// suffix makes a mirror's name from its source's.
const suffix = "-mirror"

// Name is the name of the mirror of the ConfigMap called source.
func Name(source string) string { return source + suffix }

// Labelled reports whether obj asks for a mirror: its [Label] is "true".
func Labelled(obj metav1.Object) bool {
	return obj != nil && obj.GetLabels()[Label] == "true"
}

// configMapKind is the kind of a mirror's owner reference.
var configMapKind = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// Reconciler keeps each labelled ConfigMap's mirror. Build it with
// NewReconciler.
type Reconciler struct {
	configMaps ports.Reader[*corev1.ConfigMap]
	writer     ports.Writer[*corev1.ConfigMap]
}

var _ ports.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler reading ConfigMaps, sources and
// mirrors alike, through configMaps and writing mirrors through writer.
func NewReconciler(configMaps ports.Reader[*corev1.ConfigMap], writer ports.Writer[*corev1.ConfigMap]) (*Reconciler, error) {
	if configMaps == nil || writer == nil {
		return nil, errors.New("mirror reconciler: reader and writer are required")
	}
	return &Reconciler{configMaps: configMaps, writer: writer}, nil
}

// Reconcile makes the mirror of the ConfigMap named by req what the source
// asks for now. req names the source whichever object changed: a mirror's
// events reach the controller as its owner's.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	source, err := r.configMaps.Get(ctx, req.NamespacedName)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		source = nil
	case err != nil:
		return ports.Result{}, fmt.Errorf("get configmap %s: %w", req.NamespacedName, err)
	}
	key := types.NamespacedName{Namespace: req.Namespace, Name: Name(req.Name)}
	mirror, err := r.configMaps.Get(ctx, key)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		mirror = nil
	case err != nil:
		return ports.Result{}, fmt.Errorf("get mirror %s: %w", key, err)
	}
	if source == nil || !Labelled(source) {
		return ports.Result{}, r.remove(ctx, req.Name, source, key, mirror)
	}
	return ports.Result{}, r.sync(ctx, source, key, mirror)
}

// remove deletes mirror, the ConfigMap at key, when the source called
// name controls it; source is nil when it is gone, and then any mirror
// whose controller is a ConfigMap of that name is its.
func (r *Reconciler) remove(ctx context.Context, name string, source *corev1.ConfigMap, key types.NamespacedName, mirror *corev1.ConfigMap) error {
	if mirror == nil {
		return nil
	}
	ref := metav1.GetControllerOf(mirror)
	if ref == nil || ref.APIVersion != configMapKind.GroupVersion().String() || ref.Kind != configMapKind.Kind || ref.Name != name ||
		(source != nil && ref.UID != source.UID) {
		return nil // someone else's ConfigMap, or the garbage collector's to delete
	}
	// The uid precondition spares a mirror made anew since the cache saw
	// this one.
	err := r.writer.Delete(ctx, key, mirror.UID)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("delete mirror %s: %w", key, err)
	}
	return nil
}

// sync creates the mirror at key, or updates mirror, to hold source's
// data and binaryData.
func (r *Reconciler) sync(ctx context.Context, source *corev1.ConfigMap, key types.NamespacedName, mirror *corev1.ConfigMap) error {
	// The reader may hand out the cache's own objects: copy what goes
	// into a write.
	content := source.DeepCopy()
	var err error
	switch {
	case mirror == nil:
		_, err = r.writer.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       key.Namespace,
				Name:            key.Name,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(source, configMapKind)},
			},
			Data:       content.Data,
			BinaryData: content.BinaryData,
		})
		if err != nil {
			err = writeError("create", key, err)
		}
	case !metav1.IsControlledBy(mirror, source):
		return ports.Terminal(fmt.Errorf("mirror %s: exists and is not controlled by configmap %s", key, source.Name))
	case sameContent(mirror, source):
		return nil
	default:
		next := mirror.DeepCopy()
		next.Data, next.BinaryData = content.Data, content.BinaryData
		if _, err = r.writer.Update(ctx, next); err != nil {
			err = writeError("update", key, err)
		}
	}
	return err
}

// writeError is a failed write of the mirror at key: terminal when the
// API server refused the object, else retried (ErrAlreadyExists and
// ErrConflict too: the cache is behind what the API server stores, and
// the retry reads what it caught up to).
func writeError(verb string, key types.NamespacedName, err error) error {
	err = fmt.Errorf("%s mirror %s: %w", verb, key, err)
	if errors.Is(err, ports.ErrInvalid) {
		return ports.Terminal(err)
	}
	return err
}

// sameContent reports whether a and b hold the same data and binaryData;
// a nil and an empty map are alike, as the API server stores neither.
func sameContent(a, b *corev1.ConfigMap) bool {
	return maps.Equal(a.Data, b.Data) && maps.EqualFunc(a.BinaryData, b.BinaryData, bytes.Equal)
}
