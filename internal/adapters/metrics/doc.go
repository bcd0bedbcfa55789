// Package metrics owns the operator's Prometheus registry and serves it at
// /metrics, as controller-runtime's metrics server does, without its global
// registry.
//
// [NewRegistry] makes the registry, with the Go and process collectors;
// adapters register their metrics on it (as a prometheus.Registerer) under
// controller-runtime's names. [RESTClientMetrics] counts client-go's
// requests as rest_client_requests_total{code,method,host} between its
// Start and Stop.
//
// [Server] serves /metrics. With [Options.Secure] (the operator's default)
// it speaks HTTPS only, with the certificate of a [CertSource], and admits
// a request only when its bearer token authenticates by a TokenReview
// (else 401) and the user may use the request's verb on its path by a
// SubjectAccessReview on a non-resource URL (else 403), as
// controller-runtime's filters.WithAuthenticationAndAuthorization, so the
// usual ClusterRole rule `nonResourceURLs: ["/metrics"], verbs: ["get"]`
// works. Answers are cached briefly. Without Secure it serves plain HTTP
// and checks nothing.
package metrics
