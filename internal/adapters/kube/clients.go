package kube

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/version"
)

// Options tune the clients. The zero value is ready to use.
type Options struct {
	// UserAgent defaults to "hexagonal-operator/<version>".
	UserAgent string
}

// Clients are the client-go clients the adapters are built from; the
// typed clientset speaks protobuf.
type Clients struct {
	Kubernetes kubernetes.Interface
	Metadata   metadata.Interface
	Dynamic    dynamic.Interface

	typed      *rest.Config // builds a built-in group's REST client for [Writer]
	httpClient *http.Client
}

// NewClients builds the clients for cfg, sharing one transport. It does no
// I/O.
func NewClients(cfg *rest.Config, opts Options) (*Clients, error) {
	if cfg == nil {
		return nil, errors.New("kube clients: a rest config is required")
	}
	base := configFor(cfg, opts)
	httpClient, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, fmt.Errorf("kube clients: build http client: %w", err)
	}
	typed := rest.CopyConfig(base)
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
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

// restClientFor is a REST client of gv that decodes example's kind: with
// client-go's scheme (protobuf) for its groups, else (a CRD) with a scheme
// of that kind alone (JSON).
func (c *Clients) restClientFor(gv schema.GroupVersion, kind string, example runtime.Object) (rest.Interface, error) {
	cfg := rest.CopyConfig(c.typed)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	if scheme.Scheme.IsVersionRegistered(gv) {
		cfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	} else {
		s := runtime.NewScheme()
		s.AddKnownTypeWithName(gv.WithKind(kind), example)
		metav1.AddToGroupVersion(s, gv)
		cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
		cfg.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	}
	rc, err := rest.RESTClientForConfigAndClient(cfg, c.httpClient)
	if err != nil {
		return nil, fmt.Errorf("kube clients: %s client: %w", gv, err)
	}
	return rc, nil
}

// configFor returns a copy of cfg with opts applied and no client-side
// throttling: the API server's priority and fairness protects it, and a
// token bucket in front of it only delays the operator's converging.
func configFor(cfg *rest.Config, opts Options) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.UserAgent = opts.UserAgent
	if out.UserAgent == "" {
		out.UserAgent = "hexagonal-operator/" + version.Version
	}
	out.QPS, out.RateLimiter = -1, nil
	return out
}
