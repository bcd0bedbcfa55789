package kubeclient

import (
	"errors"
	"fmt"
	"net/http"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Clientset is the [Interface] over a real API server. Build it with
// [NewForConfigAndClient].
type Clientset struct {
	rest map[schema.GroupVersion]rest.Interface
}

var _ Interface = (*Clientset)(nil)

// NewForConfigAndClient builds the clients of every group in [AddToScheme]
// on cfg, which it does not modify, sharing httpClient's connections. The
// wire format is cfg's ContentType; when cfg leaves it empty the clients
// speak protobuf, as client-go's do. It does no I/O.
func NewForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*Clientset, error) {
	if cfg == nil || httpClient == nil {
		return nil, errors.New("kubeclient: a rest config and an http client are required")
	}
	cs := &Clientset{rest: make(map[schema.GroupVersion]rest.Interface, len(groupVersions))}
	for _, g := range groupVersions {
		c, err := restClientFor(cfg, httpClient, g.gv)
		if err != nil {
			return nil, err
		}
		cs.rest[g.gv] = c
	}
	return cs, nil
}

func restClientFor(cfg *rest.Config, httpClient *http.Client, gv schema.GroupVersion) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(Scheme, Codecs).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("kubeclient: %s client: %w", gv, err)
	}
	return rc, nil
}

// RESTClient implements Interface: the core group's client, which reaches
// any absolute path.
func (c *Clientset) RESTClient() rest.Interface { return c.rest[corev1.SchemeGroupVersion] }

// RESTClientFor returns the REST client of gv, one of the groups in
// [AddToScheme], or nil.
func (c *Clientset) RESTClientFor(gv schema.GroupVersion) rest.Interface { return c.rest[gv] }

// object is what gentype clients are made of: a pointer to an API type.
type object[E any] interface {
	*E
	runtime.Object
	metav1.Object
}

// list is a pointer to an API list type.
type list[E any] interface {
	*E
	runtime.Object
}

// namespaced builds the client of one kind, in namespace (empty for every
// namespace, or for a cluster-scoped kind).
func namespaced[T object[E], L list[LE], E, LE any](c *Clientset, gv schema.GroupVersion, resource, namespace string) Resource[T, L] {
	return NewResourceClient(c.rest[gv], resource, namespace, func() T { return new(E) }, func() L { return new(LE) })
}

// createOnly builds the client of a cluster-scoped kind that is only
// created, such as a review.
func createOnly[T object[E], E any](c *Clientset, gv schema.GroupVersion, resource string) Creator[T] {
	return NewResourceClient(c.rest[gv], resource, "", func() T { return new(E) }, func() runtime.Object { return nil })
}

// CoreV1 implements Interface.
func (c *Clientset) CoreV1() CoreV1Interface { return coreV1{c} }

// AppsV1 implements Interface.
func (c *Clientset) AppsV1() AppsV1Interface { return appsV1{c} }

// CoordinationV1 implements Interface.
func (c *Clientset) CoordinationV1() CoordinationV1Interface { return coordinationV1{c} }

// EventsV1 implements Interface.
func (c *Clientset) EventsV1() EventsV1Interface { return eventsV1{c} }

// AuthenticationV1 implements Interface.
func (c *Clientset) AuthenticationV1() AuthenticationV1Interface { return authenticationV1{c} }

// AuthorizationV1 implements Interface.
func (c *Clientset) AuthorizationV1() AuthorizationV1Interface { return authorizationV1{c} }

// AdmissionregistrationV1 implements Interface.
func (c *Clientset) AdmissionregistrationV1() AdmissionregistrationV1Interface {
	return admissionregistrationV1{c}
}

type coreV1 struct{ c *Clientset }

func (g coreV1) Pods(ns string) PodInterface {
	return namespaced[*corev1.Pod, *corev1.PodList](g.c, corev1.SchemeGroupVersion, "pods", ns)
}

func (g coreV1) Secrets(ns string) SecretInterface {
	return namespaced[*corev1.Secret, *corev1.SecretList](g.c, corev1.SchemeGroupVersion, "secrets", ns)
}

func (g coreV1) ConfigMaps(ns string) ConfigMapInterface {
	return namespaced[*corev1.ConfigMap, *corev1.ConfigMapList](g.c, corev1.SchemeGroupVersion, "configmaps", ns)
}

type appsV1 struct{ c *Clientset }

func (g appsV1) ReplicaSets(ns string) ReplicaSetInterface {
	return namespaced[*appsv1.ReplicaSet, *appsv1.ReplicaSetList](g.c, appsv1.SchemeGroupVersion, "replicasets", ns)
}

type coordinationV1 struct{ c *Clientset }

func (g coordinationV1) Leases(ns string) LeaseInterface {
	return namespaced[*coordinationv1.Lease, *coordinationv1.LeaseList](g.c, coordinationv1.SchemeGroupVersion, "leases", ns)
}

type eventsV1 struct{ c *Clientset }

func (g eventsV1) Events(ns string) EventInterface {
	return namespaced[*eventsv1.Event, *eventsv1.EventList](g.c, eventsv1.SchemeGroupVersion, "events", ns)
}

type authenticationV1 struct{ c *Clientset }

func (g authenticationV1) TokenReviews() TokenReviewInterface {
	return createOnly[*authenticationv1.TokenReview](g.c, authenticationv1.SchemeGroupVersion, "tokenreviews")
}

type authorizationV1 struct{ c *Clientset }

func (g authorizationV1) SubjectAccessReviews() SubjectAccessReviewInterface {
	return createOnly[*authorizationv1.SubjectAccessReview](g.c, authorizationv1.SchemeGroupVersion, "subjectaccessreviews")
}

func (g authorizationV1) SelfSubjectAccessReviews() SelfSubjectAccessReviewInterface {
	return createOnly[*authorizationv1.SelfSubjectAccessReview](g.c, authorizationv1.SchemeGroupVersion, "selfsubjectaccessreviews")
}

type admissionregistrationV1 struct{ c *Clientset }

func (g admissionregistrationV1) MutatingWebhookConfigurations() MutatingWebhookConfigurationInterface {
	return namespaced[*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfigurationList](
		g.c, admissionregistrationv1.SchemeGroupVersion, "mutatingwebhookconfigurations", "")
}

func (g admissionregistrationV1) ValidatingWebhookConfigurations() ValidatingWebhookConfigurationInterface {
	return namespaced[*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfigurationList](
		g.c, admissionregistrationv1.SchemeGroupVersion, "validatingwebhookconfigurations", "")
}
