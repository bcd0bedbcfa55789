package certs

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/hexagonal-operator/operator/internal/background"
)

// Keys of the kubernetes.io/tls Secret that self mode keeps: ca.crt is the
// bundle to trust (the signing CA first), ca.key signs serving
// certificates, next-ca.* is the next CA during a CA rotation.
const (
	SecretKeyCert       = corev1.TLSCertKey
	SecretKeyKey        = corev1.TLSPrivateKeyKey
	SecretKeyCABundle   = "ca.crt"
	SecretKeyCAKey      = "ca.key"
	SecretKeyNextCACert = "next-ca.crt"
	SecretKeyNextCAKey  = "next-ca.key"
)

// SelfOptions configure self-issued certificates (--webhook-cert-mode=self).
type SelfOptions struct {
	// Namespace (required) holds the Secret and the Service, whose DNS
	// names the certificate carries, with ExtraHosts (DNS names or IPs).
	Namespace   string
	SecretName  string
	ServiceName string
	ExtraHosts  []string
	// The webhook configurations that get the CA bundle.
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	CAValidity                     time.Duration
	CertValidity                   time.Duration
	// RefreshInterval is how often the Secret is re-read (another
	// replica's rotation, or time to rotate) and the bundle re-checked.
	RefreshInterval time.Duration
}

// Defaults of SelfOptions (the names config/default deploys).
const (
	DefaultSecretName                     = "hexagonal-operator-webhook-cert"
	DefaultServiceName                    = "hexagonal-operator-webhook-service"
	DefaultMutatingWebhookConfiguration   = "hexagonal-operator-mutating-webhook-configuration"
	DefaultValidatingWebhookConfiguration = "hexagonal-operator-validating-webhook-configuration"
	DefaultCAValidity                     = 5 * 365 * 24 * time.Hour
	DefaultCertValidity                   = 90 * 24 * time.Hour
	DefaultRefreshInterval                = time.Minute
)

func (o SelfOptions) withDefaults() SelfOptions {
	o.SecretName = cmp.Or(o.SecretName, DefaultSecretName)
	o.ServiceName = cmp.Or(o.ServiceName, DefaultServiceName)
	o.MutatingWebhookConfiguration = cmp.Or(o.MutatingWebhookConfiguration, DefaultMutatingWebhookConfiguration)
	o.ValidatingWebhookConfiguration = cmp.Or(o.ValidatingWebhookConfiguration, DefaultValidatingWebhookConfiguration)
	o.CAValidity = cmp.Or(o.CAValidity, DefaultCAValidity)
	o.CertValidity = cmp.Or(o.CertValidity, DefaultCertValidity)
	o.RefreshInterval = cmp.Or(o.RefreshInterval, DefaultRefreshInterval)
	return o
}

func (o SelfOptions) validate() error {
	var errs []error
	if strings.TrimSpace(o.Namespace) == "" {
		errs = append(errs, errors.New("self-issued certificates need the operator's namespace"))
	}
	if o.CertValidity <= 0 || o.CAValidity <= 0 || o.RefreshInterval <= 0 {
		errs = append(errs, errors.New("certificate validities and refresh interval must be positive"))
	}
	if o.CertValidity > o.CAValidity {
		errs = append(errs, fmt.Errorf("certificate validity %s exceeds the CA's %s", o.CertValidity, o.CAValidity))
	}
	return errors.Join(errs...)
}

// hosts are the names the serving certificate must carry.
func (o SelfOptions) hosts() []string {
	svc, ns := o.ServiceName, o.Namespace
	return append([]string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}, o.ExtraHosts...)
}

// conflictAttempts bounds retries after losing a race to another replica.
const conflictAttempts = 5

// SelfIssued issues and rotates the webhook's own CA and serving
// certificate, without cert-manager.
//
// The material lives in one Secret shared by all replicas: whoever finds it
// missing creates it, and every write is conditioned on what was just read,
// so a replica that loses a race reads the winner's material instead.
//
// A serving certificate is renewed at two thirds of its lifetime. A CA is
// replaced in two steps, so that no replica serves a certificate the API
// server does not trust yet: at two thirds of its life the next CA joins
// the bundle, a sixth of a CA lifetime later it starts signing, and the old
// one stays in the bundle until it expires.
//
// Every refresh writes the bundle into each CABundleTarget that differs.
// Between refreshes each target is watched (read about every second when
// RBAC refuses the watch), and one that stops carrying the bundle triggers
// a refresh: the bundle is restored, or this replica catches up with
// another's rotation.
type SelfIssued struct {
	background.Loop
	opts    SelfOptions
	client  kubernetes.Interface
	log     *zap.Logger
	targets []CABundleTarget
	now     func() time.Time

	cert   atomic.Pointer[tls.Certificate]
	bundle atomic.Pointer[[]byte]
	ca     atomic.Pointer[x509.Certificate] // the CA that signs

	kick     chan struct{} // asks for a refresh now
	watching atomic.Int32  // targets being watched

	// refreshing keeps a slower refresh from storing older material.
	refreshing sync.Mutex
}

// NewSelfIssued returns a source keeping its material through client, with
// the webhook configurations named in opts and extra as CA bundle targets.
func NewSelfIssued(opts SelfOptions, client kubernetes.Interface, logger *zap.Logger, extra ...CABundleTarget) (*SelfIssued, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("self-issued webhook certificate: %w", err)
	}
	targets := append([]CABundleTarget{
		MutatingWebhookConfigurationTarget(client, opts.MutatingWebhookConfiguration),
		ValidatingWebhookConfigurationTarget(client, opts.ValidatingWebhookConfiguration),
	}, extra...)
	return &SelfIssued{opts: opts, client: client, log: logger, targets: targets, now: time.Now, kick: make(chan struct{}, 1)}, nil
}

// Start makes sure the Secret holds valid material, loads it and writes the
// CA bundle, then refreshes and watches the targets in the background. It
// fails only when no certificate can be had.
func (s *SelfIssued) Start(ctx context.Context) error {
	if err := s.refresh(ctx); err != nil {
		return err
	}
	return s.Loop.Start("self-issued webhook certificate", func(loop context.Context) {
		var wg sync.WaitGroup
		for _, t := range s.targets {
			if wt, ok := t.(*target); ok {
				wg.Go(func() { s.watchTarget(loop, wt) })
			}
		}
		s.run(loop)
		wg.Wait()
	})
}

// Stop ends the refreshes and watches, waiting for them within ctx.
func (s *SelfIssued) Stop(ctx context.Context) error {
	return s.Loop.Stop(ctx, "self-issued webhook certificate")
}

// GetCertificate returns the current serving certificate.
func (s *SelfIssued) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no certificate loaded from secret %s/%s", s.opts.Namespace, s.opts.SecretName)
}

// CABundle is the PEM bundle that verifies the served certificate.
func (s *SelfIssued) CABundle() []byte {
	if b := s.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

func (s *SelfIssued) run(ctx context.Context) {
	t := time.NewTicker(s.opts.RefreshInterval)
	defer t.Stop()
	limit := flowcontrol.NewTokenBucketRateLimiter(restoreQPS, restoreBurst)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
			if limit.Wait(ctx) != nil {
				return
			}
		}
		if err := s.refresh(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("webhook certificate refresh failed, serving the current one", zap.Error(err))
		}
	}
}

// refresh is one pass: material in the Secret, certificate in memory,
// bundle in the targets.
func (s *SelfIssued) refresh(ctx context.Context) error {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	m, err := s.ensureSecret(ctx)
	if err != nil {
		return fmt.Errorf("self-issued webhook certificate: %w", err)
	}
	pair := tls.Certificate{Certificate: [][]byte{m.serving.cert.Raw}, PrivateKey: m.serving.key, Leaf: m.serving.cert}
	if cur := s.cert.Load(); cur == nil || !bytes.Equal(cur.Certificate[0], pair.Certificate[0]) {
		s.cert.Store(&pair)
		s.log.Info("webhook certificate loaded",
			zap.String("secret", s.opts.Namespace+"/"+s.opts.SecretName),
			zap.Strings("dnsNames", pair.Leaf.DNSNames),
			zap.Time("notAfter", pair.Leaf.NotAfter))
	}
	bundle := m.bundlePEM()
	s.bundle.Store(&bundle)
	s.ca.Store(m.ca.cert)
	for _, t := range s.targets {
		err := t.InjectCABundle(ctx, bundle)
		if ctx.Err() != nil {
			return nil // stopping: the next start writes the bundle again
		}
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			s.log.Info("CA bundle target not found, retrying on the next refresh", zap.String("target", t.String()))
		case errors.Is(err, errStaleBundle):
			s.log.Info("CA bundle target trusts a newer CA than this replica's secret; re-reading on the next refresh", zap.String("target", t.String()))
		default:
			s.log.Error("write CA bundle failed, retrying on the next refresh", zap.String("target", t.String()), zap.Error(err))
		}
	}
	return nil
}

// material is the parsed content of the Secret.
type material struct {
	ca      *keyPair            // signs serving certificates
	pending *keyPair            // the next CA, or nil
	trusted []*x509.Certificate // the bundle
	serving *keyPair
}

func (m *material) bundlePEM() []byte {
	b, _ := cert.EncodeCertificates(m.trusted...) // into memory: cannot fail
	return b
}

func (m *material) data() map[string][]byte {
	d := map[string][]byte{
		SecretKeyCert:     m.serving.certPEM,
		SecretKeyKey:      m.serving.keyPEM,
		SecretKeyCABundle: m.bundlePEM(),
		SecretKeyCAKey:    m.ca.keyPEM,
	}
	if m.pending != nil {
		d[SecretKeyNextCACert], d[SecretKeyNextCAKey] = m.pending.certPEM, m.pending.keyPEM
	}
	return d
}

func parseMaterial(data map[string][]byte) (*material, error) {
	ca, err := parseKeyPair(data[SecretKeyCABundle], data[SecretKeyCAKey])
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	trusted, _ := cert.ParseCertsPEM(data[SecretKeyCABundle]) // parsed above
	serving, err := parseKeyPair(data[SecretKeyCert], data[SecretKeyKey])
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	m := &material{ca: ca, trusted: trusted, serving: serving}
	// A next CA that is absent or broken is made again when due.
	m.pending, _ = parseKeyPair(data[SecretKeyNextCACert], data[SecretKeyNextCAKey])
	return m, nil
}

// plan returns the material the Secret should hold instead of m (nil: none
// usable), and why, or nil when m is fine.
func (s *SelfIssued) plan(m *material, now time.Time) (*material, string, error) {
	caExpired := m != nil && !now.Before(m.ca.cert.NotAfter)
	if caExpired && (m.pending == nil || !now.Before(m.pending.cert.NotAfter)) {
		m = nil // nothing left to rotate from: start over
	}
	if m == nil {
		ca, err := newCA(caNamePrefix+now.UTC().Format(time.RFC3339), s.opts.CAValidity, now)
		if err != nil {
			return nil, "", err
		}
		serving, err := ca.issueServing(s.opts.hosts(), s.opts.CertValidity, now)
		if err != nil {
			return nil, "", err
		}
		return &material{ca: ca, trusted: []*x509.Certificate{ca.cert}, serving: serving}, "issued a new CA and serving certificate", nil
	}
	next := &material{ca: m.ca, pending: m.pending, trusted: slices.DeleteFunc(slices.Clone(m.trusted), func(c *x509.Certificate) bool { return !now.Before(c.NotAfter) }), serving: m.serving}
	var reasons []string
	if next.pending != nil && !slices.ContainsFunc(next.trusted, next.pending.cert.Equal) {
		next.trusted = append(next.trusted, next.pending.cert)
		reasons = append(reasons, "trusted the next CA")
	}
	switch {
	case next.pending == nil && renewDue(m.ca.cert, now):
		pending, err := newCA(caNamePrefix+now.UTC().Format(time.RFC3339), s.opts.CAValidity, now)
		if err != nil {
			return nil, "", err
		}
		next.pending = pending
		next.trusted = append(next.trusted, pending.cert)
		reasons = append(reasons, "added the next CA to the bundle")
	case next.pending != nil && s.promoteDue(m, now):
		old := next.ca
		next.ca, next.pending = next.pending, nil
		next.trusted = append([]*x509.Certificate{next.ca.cert}, slices.DeleteFunc(next.trusted, next.ca.cert.Equal)...)
		if !slices.ContainsFunc(next.trusted, old.cert.Equal) && now.Before(old.cert.NotAfter) {
			next.trusted = append(next.trusted, old.cert)
		}
		reasons = append(reasons, "the next CA now signs")
	}
	if reason := s.servingProblem(next, now); reason != "" {
		serving, err := next.ca.issueServing(unionHosts(s.opts.hosts(), m.serving.cert), s.opts.CertValidity, now)
		if err != nil {
			return nil, "", err
		}
		next.serving = serving
		reasons = append(reasons, "renewed the serving certificate: "+reason)
	}
	if len(next.trusted) != len(m.trusted) && len(reasons) == 0 {
		reasons = append(reasons, "dropped an expired CA from the bundle")
	}
	if len(reasons) == 0 {
		return nil, "", nil
	}
	return next, strings.Join(reasons, "; "), nil
}

// promoteDue: the next CA has been trusted long enough for every replica
// and the API server to know it, or the signing CA has expired.
func (s *SelfIssued) promoteDue(m *material, now time.Time) bool {
	trustedFor := now.Sub(m.pending.cert.NotBefore) - backdate(s.opts.CAValidity)
	return trustedFor >= s.opts.CAValidity/6 || !now.Before(m.ca.cert.NotAfter)
}

func (s *SelfIssued) servingProblem(m *material, now time.Time) string {
	c := m.serving.cert
	switch {
	case c.CheckSignatureFrom(m.ca.cert) != nil:
		return "not signed by the current CA"
	case renewDue(c, now):
		return "two thirds of its lifetime passed"
	case slices.ContainsFunc(s.opts.hosts(), func(h string) bool { return c.VerifyHostname(h) != nil }):
		return "host names changed"
	}
	return ""
}

// renewDue is true once two thirds of c's lifetime has passed.
func renewDue(c *x509.Certificate, now time.Time) bool {
	lifetime := c.NotAfter.Sub(c.NotBefore)
	return !now.Before(c.NotAfter.Add(-lifetime / 3))
}

// unionHosts keeps the names of the current certificate: replicas
// configured with different extra hosts then converge on a certificate
// valid for all of them instead of re-issuing in turn.
func unionHosts(want []string, c *x509.Certificate) []string {
	have := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		have = append(have, ip.String())
	}
	out := slices.Clone(want)
	for _, h := range have {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// ensureSecret returns the material in the Secret after creating, repairing
// or rotating it as needed.
func (s *SelfIssued) ensureSecret(ctx context.Context) (*material, error) {
	secrets := s.client.CoreV1().Secrets(s.opts.Namespace)
	key := s.opts.Namespace + "/" + s.opts.SecretName
	for range conflictAttempts {
		now := s.now()
		sec, err := secrets.Get(ctx, s.opts.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			m, _, err := s.plan(nil, now)
			if err != nil {
				return nil, err
			}
			_, err = secrets.Create(ctx, s.newSecret(m), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue // another replica was first: use its material
			}
			if err != nil {
				return nil, fmt.Errorf("create secret %s: %w", key, err)
			}
			s.log.Info("webhook certificate secret created", zap.String("secret", key))
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get secret %s: %w", key, err)
		}
		current, parseErr := parseMaterial(sec.Data)
		next, why, err := s.plan(current, now)
		if err != nil {
			return nil, err
		}
		if next == nil {
			return current, nil
		}
		if parseErr != nil {
			why += " (secret content unusable: " + parseErr.Error() + ")"
		}
		sec = sec.DeepCopy()
		sec.Data = next.data()
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue // another replica rotated first: read its material
		}
		if err != nil {
			return nil, fmt.Errorf("update secret %s: %w", key, err)
		}
		s.log.Info("webhook certificate secret updated", zap.String("secret", key), zap.String("reason", why))
		return next, nil
	}
	return nil, fmt.Errorf("secret %s: still conflicting after %d attempts", key, conflictAttempts)
}

func (s *SelfIssued) newSecret(m *material) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.opts.Namespace,
			Name:      s.opts.SecretName,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "hexagonal-operator"},
		},
		Type: corev1.SecretTypeTLS,
		Data: m.data(),
	}
}
