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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// ChaosPodCRDName is the ChaosPod CRD's name.
const ChaosPodCRDName = "chaospods.chaosapps.metamagical.io"

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

func (t *crdTarget) String() string { return "CustomResourceDefinition/" + t.name }

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
	path := []string{"spec", "conversion", "webhook", "clientConfig"}
	if _, ok, _ := unstructured.NestedMap(crd.Object, path...); !ok {
		return fmt.Errorf("%s has no conversion webhook: %w", t, ports.ErrInvalid)
	}
	current, _, _ := unstructured.NestedString(crd.Object, append(path, "caBundle")...)
	have, _ := base64.StdEncoding.DecodeString(current)
	if bytes.Equal(have, bundle) {
		return nil
	}
	if newerCA(have, bundle) {
		return errStaleBundle
	}
	if err := unstructured.SetNestedField(crd.Object, base64.StdEncoding.EncodeToString(bundle), append(path, "caBundle")...); err != nil {
		return err
	}
	_, err = res.Update(ctx, crd, metav1.UpdateOptions{})
	return err
}
