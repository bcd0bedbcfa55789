package kubeclienttest

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
)

// Wrap returns cs as a kubeclient.Interface; cs is typically
// k8s.io/client-go/kubernetes/fake's clientset, whose reactors and
// recorded actions stay available to the test.
func Wrap(cs kubernetes.Interface) kubeclient.Interface { return clientset{cs} }

type clientset struct{ cs kubernetes.Interface }

func (c clientset) CoreV1() kubeclient.CoreV1Interface { return coreV1(c) }
func (c clientset) AppsV1() kubeclient.AppsV1Interface { return appsV1(c) }
func (c clientset) CoordinationV1() kubeclient.CoordinationV1Interface {
	return coordinationV1(c)
}
func (c clientset) EventsV1() kubeclient.EventsV1Interface { return eventsV1(c) }
func (c clientset) AuthenticationV1() kubeclient.AuthenticationV1Interface {
	return authenticationV1(c)
}
func (c clientset) AuthorizationV1() kubeclient.AuthorizationV1Interface {
	return authorizationV1(c)
}
func (c clientset) AdmissionregistrationV1() kubeclient.AdmissionregistrationV1Interface {
	return admissionregistrationV1(c)
}

// IsWatchListSemanticsUnSupported passes on what client-go's fake says of
// itself: that it cannot serve watch-lists. Hidden, a reflector on the
// wrapper would wait for ever for the bookmark that ends a watch-list's
// initial events.
func (c clientset) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(c.cs)
}

// RESTClient is the discovery client's, which is nil in the fake: as with
// a typed rest.Interface, a nil one means there is no server to reach.
func (c clientset) RESTClient() rest.Interface {
	if d := c.cs.Discovery(); d != nil {
		if rc := d.RESTClient(); rc != nil {
			return rc
		}
	}
	return nil
}

type coreV1 struct{ cs kubernetes.Interface }

func (g coreV1) Pods(ns string) kubeclient.PodInterface { return g.cs.CoreV1().Pods(ns) }
func (g coreV1) Secrets(ns string) kubeclient.SecretInterface {
	return g.cs.CoreV1().Secrets(ns)
}
func (g coreV1) ConfigMaps(ns string) kubeclient.ConfigMapInterface {
	return g.cs.CoreV1().ConfigMaps(ns)
}

type appsV1 struct{ cs kubernetes.Interface }

func (g appsV1) ReplicaSets(ns string) kubeclient.ReplicaSetInterface {
	return g.cs.AppsV1().ReplicaSets(ns)
}

type coordinationV1 struct{ cs kubernetes.Interface }

func (g coordinationV1) Leases(ns string) kubeclient.LeaseInterface {
	return g.cs.CoordinationV1().Leases(ns)
}

type eventsV1 struct{ cs kubernetes.Interface }

func (g eventsV1) Events(ns string) kubeclient.EventInterface { return g.cs.EventsV1().Events(ns) }

type authenticationV1 struct{ cs kubernetes.Interface }

func (g authenticationV1) TokenReviews() kubeclient.TokenReviewInterface {
	return g.cs.AuthenticationV1().TokenReviews()
}

type authorizationV1 struct{ cs kubernetes.Interface }

func (g authorizationV1) SubjectAccessReviews() kubeclient.SubjectAccessReviewInterface {
	return g.cs.AuthorizationV1().SubjectAccessReviews()
}

func (g authorizationV1) SelfSubjectAccessReviews() kubeclient.SelfSubjectAccessReviewInterface {
	return g.cs.AuthorizationV1().SelfSubjectAccessReviews()
}

type admissionregistrationV1 struct{ cs kubernetes.Interface }

func (g admissionregistrationV1) MutatingWebhookConfigurations() kubeclient.MutatingWebhookConfigurationInterface {
	return g.cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
}

func (g admissionregistrationV1) ValidatingWebhookConfigurations() kubeclient.ValidatingWebhookConfigurationInterface {
	return g.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
}
