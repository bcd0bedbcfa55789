// Package kube connects the operator to the Kubernetes API through
// client-go.
//
// [LoadRESTConfig] finds the cluster and [Preflight] checks that it answers;
// [NewClients] builds the typed, metadata and dynamic clients on one
// unthrottled transport; [NewWriter] implements ports.Writer[T] for any
// kind, recording writes under [FieldManager] and reporting their
// resourceVersions to writes.Observe so the next reconcile reads its own
// writes. [NewReader] implements ports.Reader[T] for any kind with a
// request to the API server on every read, for the reads that must not
// trust a cache. Every API error crosses the port through
// [TranslateError].
//
// [CheckAccess] asks, once at start-up, whether the operator's identity may
// make each request its enabled parts will make, naming every refused one
// with the manifest that grants it. [APIServerProbe] keeps the gauge
// operator_apiserver_reachable and logs each change of reachability once.
package kube
