package kubeclient

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// typed is the client of one kind: the requests client-go's generated
// clients make (its gentype package), written here because gentype also
// carries client-go's fakes, whose package (k8s.io/client-go/testing)
// costs the binary resident memory at start-up for code it never runs.
type typed[T runtime.Object, L runtime.Object] struct {
	rest      rest.Interface
	resource  string
	namespace string // empty: all namespaces, or a cluster-scoped kind
	newObject func() T
	newList   func() L
}

var _ Resource[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList] = (*typed[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList])(nil)

// NewResourceClient is the client of resource through rc, a REST client of
// the resource's group version on [Scheme]'s codecs (one of a
// [Clientset]'s, see [Clientset.RESTClientFor]), in namespace (empty for
// all namespaces or a cluster-scoped kind). newObject and newList make
// empty objects to decode into. It speaks protobuf unless rc's config
// chose a content type.
func NewResourceClient[T, L runtime.Object](rc rest.Interface, resource, namespace string, newObject func() T, newList func() L) Resource[T, L] {
	return &typed[T, L]{rest: rc, resource: resource, namespace: namespace, newObject: newObject, newList: newList}
}

// request starts every request alike: protobuf unless the config chose,
// the namespace when there is one, the resource.
func (c *typed[T, L]) request(r *rest.Request) *rest.Request {
	return r.UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource)
}

func timeoutOf(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

func (c *typed[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := c.newObject()
	err := c.request(c.rest.Get()).Name(name).VersionedParams(&opts, ParameterCodec).Do(ctx).Into(out)
	return out, err
}

func (c *typed[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := c.newList()
	err := c.request(c.rest.Get()).VersionedParams(&opts, ParameterCodec).Timeout(timeoutOf(opts)).Do(ctx).Into(out)
	return out, err
}

func (c *typed[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request(c.rest.Get()).VersionedParams(&opts, ParameterCodec).Timeout(timeoutOf(opts)).Watch(ctx)
}

func (c *typed[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := c.newObject()
	err := c.request(c.rest.Post()).VersionedParams(&opts, ParameterCodec).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (c *typed[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := c.newObject()
	name := ""
	if o, ok := any(obj).(metav1.Object); ok {
		name = o.GetName()
	}
	err := c.request(c.rest.Put()).Name(name).VersionedParams(&opts, ParameterCodec).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (c *typed[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.request(c.rest.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

func (c *typed[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := c.newObject()
	err := c.request(c.rest.Patch(pt)).Name(name).SubResource(subresources...).
		VersionedParams(&opts, ParameterCodec).Body(data).Do(ctx).Into(out)
	return out, err
}
