package confighash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Annotation holds a ConfigMap's content hash.
const Annotation = "example.hexagonal-operator.io/data-hash"

// ReasonHashStamped is the reason of the Event recorded when a ConfigMap
// gets a new hash.
const ReasonHashStamped = "HashStamped"

// content is what the hash covers, in a stable encoding: encoding/json
// writes map keys sorted, []byte as standard base64, and the omitempty tags
// make a nil and an empty map hash alike (the API server does not keep the
// difference either). HTML escaping is off so that other JSON tools write
// the same bytes.
type content struct {
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// Hash is the hex SHA-256 of a ConfigMap's content: of the JSON
// {"data":{…},"binaryData":{…}}, on one line without spaces, with keys
// sorted, binary values in base64 and empty maps left out. Anyone can recompute it, for example
//
//	printf '%s' '{"data":{"greeting":"hello"}}' | sha256sum
func Hash(data map[string]string, binaryData map[string][]byte) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Encoding string and []byte maps into memory cannot fail.
	_ = enc.Encode(content{Data: data, BinaryData: binaryData})
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}

// Reconciler stamps ConfigMaps with their content hash. Build it with New.
type Reconciler struct {
	configMaps ports.Reader[*corev1.ConfigMap]
	writer     ports.Writer[*corev1.ConfigMap]
	events     ports.EventRecorder
}

var _ ports.Reconciler = (*Reconciler)(nil)

// New returns a Reconciler reading ConfigMaps through configMaps, writing
// their annotations through writer and recording Events through events.
func New(configMaps ports.Reader[*corev1.ConfigMap], writer ports.Writer[*corev1.ConfigMap], events ports.EventRecorder) (*Reconciler, error) {
	if configMaps == nil || writer == nil || events == nil {
		return nil, errors.New("confighash reconciler: reader, writer and event recorder are required")
	}
	return &Reconciler{configMaps: configMaps, writer: writer, events: events}, nil
}

// Reconcile makes sure the ConfigMap named by req carries the hash of its
// current content.
func (r *Reconciler) Reconcile(ctx context.Context, req ports.Request) (ports.Result, error) {
	cm, err := r.configMaps.Get(ctx, req.NamespacedName)
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Result{}, nil
	}
	if err != nil {
		return ports.Result{}, fmt.Errorf("get configmap %s: %w", req.NamespacedName, err)
	}
	hash := Hash(cm.Data, cm.BinaryData)
	if cm.Annotations[Annotation] == hash {
		return ports.Result{}, nil
	}
	err = r.writer.PatchMetadata(ctx, req.NamespacedName, ports.MetadataPatch{Annotations: map[string]string{Annotation: hash}})
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return ports.Result{}, nil // deleted since we read it
	case errors.Is(err, ports.ErrInvalid):
		return ports.Result{}, ports.Terminal(fmt.Errorf("stamp configmap %s: %w", req.NamespacedName, err))
	case err != nil:
		return ports.Result{}, fmt.Errorf("stamp configmap %s: %w", req.NamespacedName, err)
	}
	r.events.Eventf(cm, ports.EventTypeNormal, ReasonHashStamped, "Annotate", "Set annotation %s=%s", Annotation, hash)
	return ports.Result{}, nil
}
