package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
)

// CABundleTarget is an object whose clientConfig must trust the self-issued
// CA: the webhook configurations, and the CRD's conversion webhook
// ([CRDConversionTarget], provided in [GroupCATargets]).
type CABundleTarget interface {
	String() string // "Kind/name", for logs
	// InjectCABundle writes bundle when it differs, and refuses with
	// errStaleBundle to replace a bundle that trusts a newer CA: a replica
	// that has not yet seen a rotation must not undo it.
	InjectCABundle(ctx context.Context, bundle []byte) error
}

var errStaleBundle = errors.New("target trusts a newer CA than the bundle to write")

// target is the CABundleTarget of one named object.
type target struct {
	kind, name string
	get        func(ctx context.Context) (runtime.Object, error)
	update     func(ctx context.Context, obj runtime.Object) error
	watch      func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// bundles returns the caBundle of each of obj's clientConfigs, false
	// when it has none; set writes bundle into all of them.
	bundles func(obj runtime.Object) ([][]byte, bool)
	set     func(obj runtime.Object, bundle []byte) error
}

func (t *target) String() string { return t.kind + "/" + t.name }

func (t *target) InjectCABundle(ctx context.Context, bundle []byte) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return t.inject(ctx, bundle) })
	if err != nil {
		return fmt.Errorf("write CA bundle into %s: %w", t, err)
	}
	return nil
}

func (t *target) inject(ctx context.Context, bundle []byte) error {
	obj, err := t.get(ctx)
	if err != nil {
		return err
	}
	have, ok := t.bundles(obj)
	if !ok {
		return errors.New("no clientConfig to write it into")
	}
	if t.holds(obj, bundle) {
		return nil
	}
	if slices.ContainsFunc(have, func(b []byte) bool { return newerCA(b, bundle) }) {
		return errStaleBundle
	}
	if err := t.set(obj, bundle); err != nil {
		return err
	}
	return t.update(ctx, obj)
}

// holds reports whether obj carries bundle wherever the target writes it
// (another object, or one with nowhere to write, holds anything).
func (t *target) holds(obj runtime.Object, bundle []byte) bool {
	if m, err := meta.Accessor(obj); err != nil || m.GetName() != t.name {
		return true
	}
	have, ok := t.bundles(obj)
	return !ok || !slices.ContainsFunc(have, func(b []byte) bool { return !bytes.Equal(b, bundle) })
}

// typedAPI is the part of a typed client-go resource interface a target uses.
type typedAPI[T runtime.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// webhookConfigTarget writes the bundle into every clientConfig of the named
// webhook configuration of kind T.
func webhookConfigTarget[T runtime.Object](kind, name string, api typedAPI[T], configs func(T) []*admissionregistrationv1.WebhookClientConfig) *target {
	return &target{
		kind: kind, name: name,
		get: func(ctx context.Context) (runtime.Object, error) { return api.Get(ctx, name, metav1.GetOptions{}) },
		update: func(ctx context.Context, obj runtime.Object) error {
			_, err := api.Update(ctx, obj.(T), metav1.UpdateOptions{})
			return err
		},
		watch: api.Watch,
		bundles: func(obj runtime.Object) ([][]byte, bool) {
			var out [][]byte
			for _, cc := range configs(obj.(T)) {
				out = append(out, cc.CABundle)
			}
			return out, true
		},
		set: func(obj runtime.Object, bundle []byte) error {
			for _, cc := range configs(obj.(T)) {
				cc.CABundle = bundle
			}
			return nil
		},
	}
}

// MutatingWebhookConfigurationTarget writes the bundle into every webhook
// of the named MutatingWebhookConfiguration.
func MutatingWebhookConfigurationTarget(client kubernetes.Interface, name string) CABundleTarget {
	return webhookConfigTarget("MutatingWebhookConfiguration", name, client.AdmissionregistrationV1().MutatingWebhookConfigurations(),
		func(cfg *admissionregistrationv1.MutatingWebhookConfiguration) (out []*admissionregistrationv1.WebhookClientConfig) {
			for i := range cfg.Webhooks {
				out = append(out, &cfg.Webhooks[i].ClientConfig)
			}
			return out
		})
}

// ValidatingWebhookConfigurationTarget writes the bundle into every webhook
// of the named ValidatingWebhookConfiguration.
func ValidatingWebhookConfigurationTarget(client kubernetes.Interface, name string) CABundleTarget {
	return webhookConfigTarget("ValidatingWebhookConfiguration", name, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(),
		func(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) (out []*admissionregistrationv1.WebhookClientConfig) {
			for i := range cfg.Webhooks {
				out = append(out, &cfg.Webhooks[i].ClientConfig)
			}
			return out
		})
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Where the CRD's conversion webhook keeps its clientConfig and bundle.
var (
	clientConfigPath = []string{"spec", "conversion", "webhook", "clientConfig"}
	caBundlePath     = append(slices.Clone(clientConfigPath), "caBundle")
)

// CRDConversionTarget writes the bundle into the conversion webhook's
// clientConfig of the named CRD, through the dynamic client.
func CRDConversionTarget(client dynamic.Interface, name string) CABundleTarget {
	crds := client.Resource(crdResource)
	return &target{
		kind: "CustomResourceDefinition", name: name,
		get: func(ctx context.Context) (runtime.Object, error) { return crds.Get(ctx, name, metav1.GetOptions{}) },
		update: func(ctx context.Context, obj runtime.Object) error {
			_, err := crds.Update(ctx, obj.(*unstructured.Unstructured), metav1.UpdateOptions{})
			return err
		},
		watch: crds.Watch,
		bundles: func(obj runtime.Object) ([][]byte, bool) {
			crd, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil, false
			}
			if _, ok, _ := unstructured.NestedMap(crd.Object, clientConfigPath...); !ok {
				return nil, false
			}
			encoded, _, _ := unstructured.NestedString(crd.Object, caBundlePath...)
			have, err := base64.StdEncoding.DecodeString(encoded)
			if err != nil {
				have = nil // not a bundle: replaced
			}
			return [][]byte{have}, true
		},
		set: func(obj runtime.Object, bundle []byte) error {
			return unstructured.SetNestedField(obj.(*unstructured.Unstructured).Object, base64.StdEncoding.EncodeToString(bundle), caBundlePath...)
		},
	}
}

// newerCA reports whether current trusts a CA of self mode newer than
// every CA in ours and absent from it.
func newerCA(current, ours []byte) bool {
	have, errHave := cert.ParseCertsPEM(current)
	mine, errMine := cert.ParseCertsPEM(ours)
	if errHave != nil || errMine != nil {
		return false
	}
	newest := slices.MaxFunc(mine, func(a, b *x509.Certificate) int { return a.NotBefore.Compare(b.NotBefore) })
	return slices.ContainsFunc(have, func(c *x509.Certificate) bool {
		return ownCA(c) && c.NotBefore.After(newest.NotBefore) && !slices.ContainsFunc(mine, c.Equal)
	})
}

// caNamePrefix starts the common name of every CA that self mode issues.
const caNamePrefix = "hexagonal-operator-webhook-ca@"

func ownCA(c *x509.Certificate) bool {
	return c.IsCA && strings.HasPrefix(c.Subject.CommonName, caNamePrefix)
}
