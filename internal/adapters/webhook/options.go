package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Certificate modes (--webhook-cert-mode).
const (
	// CertModeExternal serves tls.crt/tls.key from CertDir, mounted by
	// someone else (cert-manager, a Secret volume), reloaded on change.
	CertModeExternal = "external"
	// CertModeSelf issues a CA and serving certificate, keeps them in a
	// Secret shared by all replicas, rotates them and writes the CA bundle
	// into the webhook configurations.
	CertModeSelf = "self"
)

// Defaults applied by Options.withDefaults to zero fields.
const (
	DefaultPort    = 9443
	DefaultCertDir = "/tmp/k8s-webhook-server/serving-certs"
	// DefaultMaxRequestBytes fits the largest review the API server sends:
	// an UPDATE carries the object and the old object, each up to the API
	// server's 3 MiB request limit, plus the envelope.
	DefaultMaxRequestBytes = 7 << 20
	// DefaultMaxConversionBytes is larger: the API server converts a whole
	// list in one ConversionReview.
	DefaultMaxConversionBytes = 64 << 20
	// DefaultMaxBodyBytesInFlight and DefaultMaxRequestsInFlight bound
	// what requests hold at once, so that a flood of large or slow bodies
	// keeps the operator well under half of its 256 MiB memory limit
	// (config/manager/manager.yaml). Every request in flight costs its
	// connection's buffers and goroutine on top of its body.
	DefaultMaxBodyBytesInFlight = 32 << 20
	DefaultMaxRequestsInFlight  = 512
	// DefaultCertPollInterval is how often external certificate files are
	// re-read. A Secret volume takes up to a minute to change anyway.
	DefaultCertPollInterval = 3 * time.Second
	// The API server waits at most 30 s for a webhook; a request still
	// running after that has no one to answer to.
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	// The API server keeps connections to webhooks alive; closing idle
	// ones quickly would cost a TLS handshake per request.
	DefaultIdleTimeout = 120 * time.Second
)

// AnyPort as Options.Port lets the kernel choose a free port (tests); Addr
// reports it.
const AnyPort = -1

// Options configure the webhook server and its certificates. Zero fields get
// the defaults above.
type Options struct {
	// Host to bind; empty means every interface.
	Host string
	// Port to bind; 0 means DefaultPort, AnyPort a free one.
	Port int
	// CertMode is CertModeExternal (default) or CertModeSelf.
	CertMode string
	// CertDir holds the certificate and its key in external mode.
	CertDir string
	// CertName and KeyName are their file names in CertDir (defaults
	// tls.crt and tls.key, as in a kubernetes.io/tls Secret).
	CertName, KeyName string
	// CertPollInterval is how often CertDir is checked for new files.
	CertPollInterval time.Duration
	// EnableHTTP2 offers HTTP/2 in ALPN. Off by default: HTTP/2 rapid
	// reset (CVE-2023-44487) costs a server far more than a client.
	EnableHTTP2 bool
	// MaxRequestBytes bounds a request body; larger ones get 413.
	MaxRequestBytes int64
	// MaxConversionBytes bounds a ConversionReview body; larger ones get 413.
	MaxConversionBytes int64
	// MaxBodyBytesInFlight bounds the bytes that all request bodies being
	// read or served hold at once; a request the budget cannot spare its
	// next bytes gets 429 with Retry-After. A reserve of smallBodyBytes per
	// request slot, up to half of the budget, is kept for the first
	// smallBodyBytes of each body (budget.go), and one client address may
	// fill half of the rest, so no body can be larger than that half plus
	// smallBodyBytes, whatever the two limits above say: a larger one gets
	// 413.
	MaxBodyBytesInFlight int64
	// MaxRequestsInFlight bounds the requests read or served at once;
	// more get 429 with Retry-After. One client address may hold half of
	// them, and open as many connections.
	MaxRequestsInFlight int

	// ShutdownDelay is how long Stop goes on serving before it closes the
	// listener, answering with "Connection: close" meanwhile. The API
	// server keeps calling a webhook until it learns the endpoint is gone
	// (a Service's endpoints follow the Pod's readiness a little later), and
	// a call that finds the port closed fails its admission. Zero: none.
	ShutdownDelay time.Duration

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration

	// Self configures CertModeSelf; ignored in external mode.
	Self SelfCertOptions
}

func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.CertMode == "" {
		o.CertMode = CertModeExternal
	}
	if o.CertDir == "" {
		o.CertDir = DefaultCertDir
	}
	if o.CertPollInterval == 0 {
		o.CertPollInterval = DefaultCertPollInterval
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxConversionBytes == 0 {
		o.MaxConversionBytes = DefaultMaxConversionBytes
	}
	if o.MaxBodyBytesInFlight == 0 {
		o.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if o.MaxRequestsInFlight == 0 {
		o.MaxRequestsInFlight = DefaultMaxRequestsInFlight
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	o.Self = o.Self.withDefaults()
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Port < AnyPort || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", o.Port))
	}
	switch o.CertMode {
	case CertModeExternal, CertModeSelf:
	default:
		errs = append(errs, fmt.Errorf("certificate mode %q (want %s or %s)", o.CertMode, CertModeExternal, CertModeSelf))
	}
	if o.MaxRequestBytes < 0 || o.MaxConversionBytes < 0 {
		errs = append(errs, errors.New("negative request size limit"))
	}
	if o.MaxBodyBytesInFlight < 0 || o.MaxRequestsInFlight < 0 {
		errs = append(errs, errors.New("negative in-flight limit"))
	}
	if o.CertPollInterval < 0 {
		errs = append(errs, errors.New("negative certificate poll interval"))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, errors.New("negative shutdown delay"))
	}
	if o.CertMode == CertModeSelf {
		if err := o.Self.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SelfCertOptions configure self-issued certificates.
type SelfCertOptions struct {
	// Namespace is the operator's namespace: the Secret lives there and
	// the Service is named in it. Required.
	Namespace string
	// SecretName is the Secret shared by all replicas.
	SecretName string
	// ServiceName is the Service the API server calls; the certificate
	// carries its DNS names.
	ServiceName string
	// ExtraHosts are more names (DNS or IP) for the certificate, for
	// example 127.0.0.1 when the API server calls a URL in tests.
	ExtraHosts []string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration get
	// the CA bundle (defaults: the names config/default deploys).
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	// CAValidity and CertValidity are the lifetimes of new certificates.
	// Each is renewed once two thirds of its lifetime has passed.
	CAValidity   time.Duration
	CertValidity time.Duration
	// RefreshInterval is how often the Secret is re-read (to pick up a
	// rotation by another replica, or rotate) and the CA bundle re-checked.
	RefreshInterval time.Duration
}

// Defaults of SelfCertOptions (the names config/default deploys).
const (
	DefaultSecretName                     = "hexagonal-operator-webhook-cert"
	DefaultServiceName                    = "hexagonal-operator-webhook-service"
	DefaultMutatingWebhookConfiguration   = "hexagonal-operator-mutating-webhook-configuration"
	DefaultValidatingWebhookConfiguration = "hexagonal-operator-validating-webhook-configuration"
	DefaultCAValidity                     = 5 * 365 * 24 * time.Hour
	DefaultCertValidity                   = 90 * 24 * time.Hour
	DefaultRefreshInterval                = time.Minute
)

func (o SelfCertOptions) withDefaults() SelfCertOptions {
	if o.SecretName == "" {
		o.SecretName = DefaultSecretName
	}
	if o.ServiceName == "" {
		o.ServiceName = DefaultServiceName
	}
	if o.MutatingWebhookConfiguration == "" {
		o.MutatingWebhookConfiguration = DefaultMutatingWebhookConfiguration
	}
	if o.ValidatingWebhookConfiguration == "" {
		o.ValidatingWebhookConfiguration = DefaultValidatingWebhookConfiguration
	}
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CertValidity == 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	return o
}

func (o SelfCertOptions) validate() error {
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

// DNSNames are the names the serving certificate is valid for.
func (o SelfCertOptions) DNSNames() []string {
	svc, ns := o.ServiceName, o.Namespace
	return []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}
}
