package kubeclient

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// Interface is the operator's view of the API server's built-in kinds,
// shaped like client-go's clientset so code reads the same.
type Interface interface {
	CoreV1() CoreV1Interface
	AppsV1() AppsV1Interface
	CoordinationV1() CoordinationV1Interface
	EventsV1() EventsV1Interface
	AuthenticationV1() AuthenticationV1Interface
	AuthorizationV1() AuthorizationV1Interface
	AdmissionregistrationV1() AdmissionregistrationV1Interface
	// RESTClient reaches paths outside any group, such as /version; nil
	// when there is no server behind the client (fakes).
	RESTClient() rest.Interface
}

// Resource reads, writes and watches one kind: the method set of
// client-go's typed clients, without server-side apply.
type Resource[T, L any] interface {
	Creator[T]
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// Creator creates objects of a kind that is only ever created, such as a
// TokenReview.
type Creator[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}

// The kinds, one alias each so signatures stay short.
type (
	// PodInterface serves Pods.
	PodInterface = Resource[*corev1.Pod, *corev1.PodList]
	// SecretInterface serves Secrets.
	SecretInterface = Resource[*corev1.Secret, *corev1.SecretList]
	// ConfigMapInterface serves ConfigMaps.
	ConfigMapInterface = Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	// ReplicaSetInterface serves ReplicaSets.
	ReplicaSetInterface = Resource[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]
	// LeaseInterface serves Leases.
	LeaseInterface = Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
	// EventInterface serves Events (events.k8s.io/v1).
	EventInterface = Resource[*eventsv1.Event, *eventsv1.EventList]
	// TokenReviewInterface creates TokenReviews.
	TokenReviewInterface = Creator[*authenticationv1.TokenReview]
	// SubjectAccessReviewInterface creates SubjectAccessReviews.
	SubjectAccessReviewInterface = Creator[*authorizationv1.SubjectAccessReview]
	// SelfSubjectAccessReviewInterface creates SelfSubjectAccessReviews.
	SelfSubjectAccessReviewInterface = Creator[*authorizationv1.SelfSubjectAccessReview]
	// MutatingWebhookConfigurationInterface serves MutatingWebhookConfigurations.
	MutatingWebhookConfigurationInterface = Resource[*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfigurationList]
	// ValidatingWebhookConfigurationInterface serves ValidatingWebhookConfigurations.
	ValidatingWebhookConfigurationInterface = Resource[*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfigurationList]
)

// CoreV1Interface serves the core group's kinds the operator uses.
type CoreV1Interface interface {
	Pods(namespace string) PodInterface
	Secrets(namespace string) SecretInterface
	ConfigMaps(namespace string) ConfigMapInterface
}

// AppsV1Interface serves apps/v1.
type AppsV1Interface interface {
	ReplicaSets(namespace string) ReplicaSetInterface
}

// CoordinationV1Interface serves coordination.k8s.io/v1.
type CoordinationV1Interface interface {
	Leases(namespace string) LeaseInterface
}

// EventsV1Interface serves events.k8s.io/v1.
type EventsV1Interface interface {
	Events(namespace string) EventInterface
}

// AuthenticationV1Interface serves authentication.k8s.io/v1.
type AuthenticationV1Interface interface {
	TokenReviews() TokenReviewInterface
}

// AuthorizationV1Interface serves authorization.k8s.io/v1.
type AuthorizationV1Interface interface {
	SubjectAccessReviews() SubjectAccessReviewInterface
	SelfSubjectAccessReviews() SelfSubjectAccessReviewInterface
}

// AdmissionregistrationV1Interface serves admissionregistration.k8s.io/v1.
type AdmissionregistrationV1Interface interface {
	MutatingWebhookConfigurations() MutatingWebhookConfigurationInterface
	ValidatingWebhookConfigurations() ValidatingWebhookConfigurationInterface
}
