package kube

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/hexagonal-operator/operator/internal/version"
)

// Defaults applied by [Options] fields left zero. They are controller-runtime's,
// so the operator puts the same load on an API server as a kubebuilder one.
const (
	DefaultQPS   float32 = 20
	DefaultBurst int     = 30
)

// contentTypeProtobuf is cheaper to encode and decode than JSON; the API
// server speaks it for every built-in type (not for custom resources).
const contentTypeProtobuf = "application/vnd.kubernetes.protobuf"

// Options tune the clients. The zero value is ready to use.
type Options struct {
	// QPS is the sustained rate of requests per second shared by all three
	// clients; 0 means DefaultQPS, a negative value turns client-side rate
	// limiting off (the API server's priority and fairness still applies).
	QPS float32
	// Burst is how many requests may exceed QPS for a moment; 0 means
	// DefaultBurst.
	Burst int
	// UserAgent identifies the operator in the API server's logs and audit
	// events; empty means "hexagonal-operator/<version>".
	UserAgent string
	// DisableProtobuf makes the typed clients speak JSON, for debugging
	// the wire with a proxy.
	DisableProtobuf bool
}

// Clients are the client-go clients the adapters are built from.
type Clients struct {
	// Kubernetes is client-go's typed clientset of the built-in kinds.
	Kubernetes kubernetes.Interface
	// Metadata reads and watches only the metadata of any kind.
	Metadata metadata.Interface
	// Dynamic reads and writes any kind, custom resources included, as
	// unstructured objects.
	Dynamic dynamic.Interface

	// typed and httpClient build the REST client of a built-in group for
	// [Writer]; nil in Clients made by hand (tests), which then write
	// through Dynamic.
	typed      *rest.Config
	httpClient *http.Client
}

// NewClients builds the clients for cfg, which it does not modify. It does
// no I/O.
func NewClients(cfg *rest.Config, opts Options) (*Clients, error) {
	if cfg == nil {
		return nil, errors.New("kube clients: a rest config is required")
	}
	base, err := configFor(cfg, opts)
	if err != nil {
		return nil, err
	}
	// One transport: one connection pool and one set of TLS sessions for
	// every client, as controller-runtime does.
	httpClient, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, fmt.Errorf("kube clients: build http client: %w", err)
	}
	typed := rest.CopyConfig(base)
	if opts.DisableProtobuf {
		// Explicit, or the typed clients would prefer protobuf.
		typed.ContentType = "application/json"
	} else {
		typed.ContentType = contentTypeProtobuf
		typed.AcceptContentTypes = contentTypeProtobuf + ",application/json"
	}
	k, err := kubernetes.NewForConfigAndClient(typed, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube clients: build clientset: %w", err)
	}
	// The metadata and dynamic clients choose their own wire formats.
	m, err := metadata.NewForConfigAndClient(base, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube clients: build metadata client: %w", err)
	}
	d, err := dynamic.NewForConfigAndClient(base, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube clients: build dynamic client: %w", err)
	}
	return &Clients{Kubernetes: k, Metadata: m, Dynamic: d, typed: typed, httpClient: httpClient}, nil
}

// restClientFor is the REST client of gv, a group of client-go's scheme,
// configured as the clientset's typed clients are; nil for another group
// or Clients made by hand.
func (c *Clients) restClientFor(gv schema.GroupVersion) (rest.Interface, error) {
	if c.typed == nil || !scheme.Scheme.IsVersionRegistered(gv) {
		return nil, nil
	}
	cfg := rest.CopyConfig(c.typed)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(cfg, c.httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube clients: %s client: %w", gv, err)
	}
	return rc, nil
}

// configFor returns a copy of cfg with opts applied.
func configFor(cfg *rest.Config, opts Options) (*rest.Config, error) {
	out := rest.CopyConfig(cfg)
	out.UserAgent = opts.UserAgent
	if out.UserAgent == "" {
		out.UserAgent = "hexagonal-operator/" + version.Version
	}
	qps, burst := opts.QPS, opts.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst == 0 {
		burst = DefaultBurst
	}
	if burst < 0 {
		return nil, fmt.Errorf("kube clients: burst must not be negative, got %d", burst)
	}
	out.QPS, out.Burst = qps, burst
	if qps > 0 {
		// Set here, so that every client built from out draws from the same
		// bucket instead of each making its own.
		out.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	} else {
		out.RateLimiter = nil
	}
	return out, nil
}
