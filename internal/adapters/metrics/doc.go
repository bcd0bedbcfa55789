// Package metrics owns the operator's Prometheus registry and serves it at
// /metrics, as controller-runtime's metrics server does, without its global
// registry.
//
// # Registry
//
// [NewRegistry] makes a *prometheus.Registry with the Go and process
// collectors. Adapters receive it as a prometheus.Registerer and register
// their own metrics, under controller-runtime's names so existing dashboards
// work; nothing in the operator uses prometheus.DefaultRegisterer.
//
// # client-go's metrics
//
// client-go reports each request to a process-wide sink that can be set only
// once. This package installs a fan-out there, from init (the one global it
// keeps, explained in clientgo.go), and each [RESTClientMetrics] attaches its
// rest_client_requests_total{code,method,host} counter between Start and
// Stop. So several applications in one test process each see the requests.
//
// # Server
//
// [Server] serves /metrics from a prometheus.Gatherer. With
// [Options.Secure] (the operator's default) it speaks HTTPS only (TLS 1.2 or
// later, HTTP/1.1 unless [Options.EnableHTTP2]) with the certificate of a
// [CertSource] it starts with itself, and admits a request only when:
//
//  1. its bearer token authenticates, by a TokenReview (else 401), and
//  2. the user may use the request's verb (the HTTP method, lower case) on
//     its path, by a SubjectAccessReview on a non-resource URL (else 403).
//
// That is what controller-runtime's filters.WithAuthenticationAndAuthorization
// checks, so the usual ClusterRole works:
//
//	rules:
//	- nonResourceURLs: ["/metrics"]
//	  verbs: ["get"]
//
// Answers are cached briefly so that scrapes do not hammer the API server.
// Without Secure the server speaks plain HTTP and checks nothing.
//
// Start listens before it returns, so a taken port fails the application's
// start; serving runs in the background and Stop drains it.
package metrics
