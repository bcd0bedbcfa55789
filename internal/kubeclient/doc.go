// Package kubeclient is the operator's typed Kubernetes client: the few
// built-in kinds it reads and writes, on a scheme of only their API groups.
//
// client-go's clientset (k8s.io/client-go/kubernetes) and everything built
// on it — its informer factory, tools/events, tools/leaderelection — link
// k8s.io/client-go/kubernetes/scheme, which registers all of Kubernetes'
// built-in API groups when the program starts. That costs resident memory
// (type metadata touched at init, scheme maps on the heap) for groups the
// operator never speaks. This package builds the same typed clients from
// client-go's generic gentype clients on [Scheme] instead, so the operator
// binary links only the groups in [AddToScheme].
//
// [Interface] mirrors the clientset's shape (CoreV1().Pods(ns), ...) for
// the kinds it serves, with method sets that client-go's own typed clients
// satisfy too: package kubeclienttest wraps a fake clientset into an
// [Interface] for unit tests, and an architecture test keeps the clientset
// out of the binary.
package kubeclient
