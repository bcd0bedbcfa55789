package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// CABundleTarget is an object whose clientConfig must trust the self-issued
// CA. The webhook configurations are targets, and so is the CRD's
// conversion webhook (CRDConversionTarget, provided to Module in the group
// "webhook-ca-targets"). Targets of this package are also watched, so a
// wiped bundle is restored at once; others are checked on every refresh.
type CABundleTarget interface {
	// String names the target in logs, e.g. "MutatingWebhookConfiguration/x".
	String() string
	// InjectCABundle makes the target trust bundle. It writes only when
	// the bundle differs, reports a missing target as ports.ErrNotFound,
	// and refuses with errStaleBundle to replace a bundle that trusts a CA
	// newer than any in bundle: a replica that has not yet seen a rotation
	// must not undo it.
	InjectCABundle(ctx context.Context, bundle []byte) error
}

// errStaleBundle: the target already trusts a newer CA than ours.
var errStaleBundle = errors.New("target trusts a newer CA than the bundle to write")

// MutatingWebhookConfigurationTarget writes the bundle into every webhook
// of the named MutatingWebhookConfiguration.
func MutatingWebhookConfigurationTarget(client kubernetes.Interface, name string) CABundleTarget {
	return webhookConfigTarget("MutatingWebhookConfiguration", name, client.AdmissionregistrationV1().MutatingWebhookConfigurations(),
		func(cfg *admissionregistrationv1.MutatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
			out := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
			for i := range cfg.Webhooks {
				out[i] = &cfg.Webhooks[i].ClientConfig
			}
			return out
		})
}

// ValidatingWebhookConfigurationTarget writes the bundle into every webhook
// of the named ValidatingWebhookConfiguration.
func ValidatingWebhookConfigurationTarget(client kubernetes.Interface, name string) CABundleTarget {
	return webhookConfigTarget("ValidatingWebhookConfiguration", name, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(),
		func(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
			out := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
			for i := range cfg.Webhooks {
				out[i] = &cfg.Webhooks[i].ClientConfig
			}
			return out
		})
}

// webhookConfig is a Mutating- or ValidatingWebhookConfiguration.
type webhookConfig interface {
	runtime.Object
	GetName() string
}

// webhookConfigClient is what the typed clients of both configuration
// kinds share.
type webhookConfigClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// webhookConfigTarget is the target of one named webhook configuration of
// kind T, whose client configs clientConfigs points into.
func webhookConfigTarget[T webhookConfig](kind, name string, api webhookConfigClient[T], clientConfigs func(T) []*admissionregistrationv1.WebhookClientConfig) *configTarget {
	return &configTarget{
		kind: kind,
		name: name,
		configs: func(obj runtime.Object) (string, []*admissionregistrationv1.WebhookClientConfig, bool) {
			cfg, ok := obj.(T)
			if !ok {
				return "", nil, false
			}
			return cfg.GetName(), clientConfigs(cfg), true
		},
		getFn:   func(ctx context.Context) (runtime.Object, error) { return api.Get(ctx, name, metav1.GetOptions{}) },
		watchFn: api.Watch,
		inject: func(ctx context.Context, bundle []byte) (bool, error) {
			cfg, err := api.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			changed, err := setBundles(clientConfigs(cfg), bundle)
			if err != nil || !changed {
				return false, err
			}
			_, err = api.Update(ctx, cfg, metav1.UpdateOptions{})
			return true, err
		},
	}
}

type configTarget struct {
	kind, name string
	// inject reads, sets and (when changed) updates the object once.
	inject func(ctx context.Context, bundle []byte) (bool, error)
	// configs returns a configuration's name and the client configs the
	// bundle goes into, or false for an object of another kind.
	configs func(obj runtime.Object) (string, []*admissionregistrationv1.WebhookClientConfig, bool)
	getFn   func(ctx context.Context) (runtime.Object, error)
	watchFn func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

var _ watchedTarget = (*configTarget)(nil)

func (t *configTarget) String() string { return t.kind + "/" + t.name }

func (t *configTarget) watch(ctx context.Context) (watch.Interface, error) {
	w, err := t.watchFn(ctx, metav1.ListOptions{
		FieldSelector:  fields.OneTermEqualSelector("metadata.name", t.name).String(),
		TimeoutSeconds: watchOptionsTimeout(),
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", t, err)
	}
	return w, nil
}

func (t *configTarget) get(ctx context.Context) (runtime.Object, error) {
	obj, err := t.getFn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", t, err)
	}
	return obj, nil
}

func (t *configTarget) holds(obj runtime.Object, bundle []byte) bool {
	name, ccs, ok := t.configs(obj)
	if !ok || name != t.name {
		return true
	}
	for _, cc := range ccs {
		if !bytes.Equal(cc.CABundle, bundle) {
			return false
		}
	}
	return true
}

func (t *configTarget) InjectCABundle(ctx context.Context, bundle []byte) error {
	for range conflictAttempts {
		_, err := t.inject(ctx, bundle)
		switch {
		case err == nil:
			return nil
		case apierrors.IsConflict(err):
			continue // changed since we read it: read again
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

// setBundles sets bundle on every client config, reporting whether any
// changed. It refuses when one already trusts a newer CA.
func setBundles(configs []*admissionregistrationv1.WebhookClientConfig, bundle []byte) (bool, error) {
	changed := false
	for _, cc := range configs {
		if bytes.Equal(cc.CABundle, bundle) {
			continue
		}
		if newerCA(cc.CABundle, bundle) {
			return false, errStaleBundle
		}
		cc.CABundle = append([]byte(nil), bundle...)
		changed = true
	}
	return changed, nil
}

// newerCA reports whether current trusts one of our CAs that is newer than
// every CA in ours and absent from it. Bundles that do not parse (empty, a
// placeholder) and foreign CAs never count: those are simply replaced.
func newerCA(current, ours []byte) bool {
	have, err := parseCerts(current)
	if err != nil {
		return false
	}
	mine, err := parseCerts(ours)
	if err != nil {
		return false
	}
	newest := mine[0]
	for _, c := range mine[1:] {
		if c.NotBefore.After(newest.NotBefore) {
			newest = c
		}
	}
	for _, c := range have {
		if ownCA(c) && c.NotBefore.After(newest.NotBefore) && !slices.ContainsFunc(mine, c.Equal) {
			return true
		}
	}
	return false
}

// caNamePrefix starts the common name of every CA that self mode issues.
const caNamePrefix = "hexagonal-operator-webhook-ca@"

func ownCA(c *x509.Certificate) bool {
	return c.IsCA && strings.HasPrefix(c.Subject.CommonName, caNamePrefix)
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}
