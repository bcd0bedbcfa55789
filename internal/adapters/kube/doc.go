// Package kube plugs the operator's writer ports into the Kubernetes API
// through client-go.
//
// # Clients
//
// [NewClients] builds the three clients the operator needs from one
// *rest.Config: client-go's typed clientset (protobuf on the wire, since
// every type it talks to is built in), a metadata-only client
// (for metadata patches, and for Pods, whose specs the operator never
// reads) and a dynamic client (for CRDs). They share one HTTP transport and one client-side
// rate limiter, so [Options.QPS] and [Options.Burst] bound the whole
// process, not each client. Building them does no I/O: a bad kubeconfig
// fails here, an unreachable server fails on the first request.
//
// # Writers
//
// One generic [Writer] implements ports.Writer[T] for every kind: built-in
// kinds through the typed client, others (a CRD) through the dynamic client,
// and metadata patches through the metadata client for all. It identifies
// itself with the field manager [FieldManager], so
// `kubectl get -o yaml --show-managed-fields` tells who wrote what, and
// reports every write's resourceVersion to ports.ObserveWrite so the next
// reconcile reads its own writes.
//
// # Errors
//
// The domain never sees a Kubernetes API error: every writer passes its
// errors through [TranslateError], which maps them onto the port errors
// (ports.ErrNotFound, ports.ErrConflict, ...) and keeps the API server's
// message for logs.
//
// # Permissions
//
// [CheckAccess] asks the API server, one SelfSubjectAccessReview per
// request, whether the operator's identity may make each request its
// enabled parts will make, and names every refused one with the manifest
// that grants it ([MissingAccessError]). The composition runs it once at
// start-up, before any informer, so a narrow Role is an exit with a clear
// message rather than a Ready replica retrying a forbidden request.
//
// # Reachability
//
// [APIServerProbe] asks the API server for its version in the background
// and keeps the gauge operator_apiserver_reachable at 1 or 0, logging each
// change once rather than each probe. Its [APIServerCheck] is kept out of
// /readyz and /healthz: admission never calls the API server, so an outage
// must neither take the webhook's endpoints away nor restart the process.
package kube
