package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/hexagonal-operator/operator/internal/ports"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDConversionTarget writes the bundle into the conversion webhook's
// clientConfig of the named CRD, through the dynamic client so the operator
// needs no apiextensions clientset. Provide it in the group
// "webhook-ca-targets" in self cert mode.
func CRDConversionTarget(client dynamic.Interface, name string) CABundleTarget {
	return &crdTarget{client: client, name: name}
}

type crdTarget struct {
	client dynamic.Interface
	name   string
}

var _ watchedTarget = (*crdTarget)(nil)

func (t *crdTarget) String() string { return "CustomResourceDefinition/" + t.name }

// Where the conversion webhook's clientConfig and its bundle live.
var (
	clientConfigPath = []string{"spec", "conversion", "webhook", "clientConfig"}
	caBundlePath     = []string{"spec", "conversion", "webhook", "clientConfig", "caBundle"}
)

func (t *crdTarget) watch(ctx context.Context) (watch.Interface, error) {
	w, err := t.client.Resource(crdResource).Watch(ctx, metav1.ListOptions{
		FieldSelector:  fields.OneTermEqualSelector("metadata.name", t.name).String(),
		TimeoutSeconds: watchOptionsTimeout(),
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", t, err)
	}
	return w, nil
}

func (t *crdTarget) get(ctx context.Context) (runtime.Object, error) {
	crd, err := t.client.Resource(crdResource).Get(ctx, t.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", t, err)
	}
	return crd, nil
}

func (t *crdTarget) holds(obj runtime.Object, bundle []byte) bool {
	crd, ok := obj.(*unstructured.Unstructured)
	if !ok || crd.GetName() != t.name {
		return true
	}
	if _, ok, _ := unstructured.NestedMap(crd.Object, clientConfigPath...); !ok {
		return true // no conversion webhook: inject refuses, nothing to restore
	}
	current, _, _ := unstructured.NestedString(crd.Object, caBundlePath...)
	have, err := base64.StdEncoding.DecodeString(current)
	return err == nil && bytes.Equal(have, bundle)
}

func (t *crdTarget) InjectCABundle(ctx context.Context, bundle []byte) error {
	for range conflictAttempts {
		err := t.inject(ctx, bundle)
		switch {
		case err == nil:
			return nil
		case apierrors.IsConflict(err):
			continue
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%s: %w", t, ports.ErrNotFound)
		case errors.Is(err, errStaleBundle):
			return fmt.Errorf("%s: %w", t, err)
		default:
			return fmt.Errorf("write CA bundle into %s: %w", t, err)
		}
	}
	return fmt.Errorf("write CA bundle into %s: still conflicting after %d attempts", t, conflictAttempts)
}

func (t *crdTarget) inject(ctx context.Context, bundle []byte) error {
	res := t.client.Resource(crdResource)
	crd, err := res.Get(ctx, t.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if _, ok, _ := unstructured.NestedMap(crd.Object, clientConfigPath...); !ok {
		return fmt.Errorf("%s has no conversion webhook: %w", t, ports.ErrInvalid)
	}
	current, _, _ := unstructured.NestedString(crd.Object, caBundlePath...)
	have, _ := base64.StdEncoding.DecodeString(current)
	if bytes.Equal(have, bundle) {
		return nil
	}
	if newerCA(have, bundle) {
		return errStaleBundle
	}
	if err := unstructured.SetNestedField(crd.Object, base64.StdEncoding.EncodeToString(bundle), caBundlePath...); err != nil {
		return err
	}
	_, err = res.Update(ctx, crd, metav1.UpdateOptions{})
	return err
}
