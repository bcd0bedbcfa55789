package kubeclient

import (
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
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// groupVersions are the built-in API groups the operator talks to, each
// with its types' registration.
var groupVersions = []struct {
	gv  schema.GroupVersion
	add func(*runtime.Scheme) error
}{
	{corev1.SchemeGroupVersion, corev1.AddToScheme},
	{appsv1.SchemeGroupVersion, appsv1.AddToScheme},
	{coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme},
	{eventsv1.SchemeGroupVersion, eventsv1.AddToScheme},
	{authenticationv1.SchemeGroupVersion, authenticationv1.AddToScheme},
	{authorizationv1.SchemeGroupVersion, authorizationv1.AddToScheme},
	{admissionregistrationv1.SchemeGroupVersion, admissionregistrationv1.AddToScheme},
}

// AddToScheme registers the types of every group the clients serve.
func AddToScheme(s *runtime.Scheme) error {
	for _, g := range groupVersions {
		if err := g.add(s); err != nil {
			return err
		}
	}
	return nil
}

// Scheme holds the types of the groups in AddToScheme and the meta types
// list options are encoded with. Treat it as read-only.
var Scheme = runtime.NewScheme()

// Codecs are Scheme's serializers (JSON, YAML, protobuf).
var Codecs = serializer.NewCodecFactory(Scheme)

// ParameterCodec encodes list, get and patch options into query parameters.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	// The groups' own registration cannot fail; a failure is a programming
	// error in this file, as it is in client-go's scheme.
	utilruntime.Must(AddToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
}
