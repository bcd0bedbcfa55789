// Package webhook is the driving adapter that serves admission webhooks over
// HTTPS: it turns AdmissionReviews into typed calls on the domain's
// admission ports (ports.Defaulter[*T], ports.Validator[*T]) and their
// answers back into reviews.
//
// # Registration
//
// One table of [Hook] values says, per webhook, its path, the resource and
// operations it serves, what answers it ([Admitter], a typed rule added
// with [Mutating] or [Validating]), and how the API server should call it:
// failure policy, match policy, side effects, timeout and selectors. The
// package knows no workload: the composition root declares every row
// (internal/app's webhooks.go) and hands the table to the server through
// the fx group [GroupHooks]. The server mounts every row;
// [MutatingWebhookConfiguration] and [ValidatingWebhookConfiguration]
// render the same rows as manifests, and a test holds config/webhook to
// them, so code and YAML cannot drift.
//
// # Requests
//
// Only POSTed JSON admission.k8s.io/v1 AdmissionReviews with a request and a
// UID are admitted to the rules; anything else gets an HTTP client error
// that says what was wrong (405, 415, 400, 413 above
// Options.MaxRequestBytes). A request for a kind, version, resource or
// subresource the hook does not serve, or without an object the rule's
// method takes, is denied with the request's UID and code 400; an
// operation the row leaves out is admitted without asking the rule. A
// rule's ports.Denied is a denial with code 403; any other error is a
// denial with code 500; a rule that panics is an HTTP 500, logged with its
// stack, and the server carries on.
//
// A defaulter changes the decoded object (field names match exactly, as
// the API server matches them); the answer is the minimal JSON patch from
// the object as received to the object as the rule left it, touching no
// field this build does not know. Warnings pass through.
//
// Every request is measured with controller-runtime's metric names
// (controller_runtime_webhook_requests_total{webhook,code},
// controller_runtime_webhook_latency_seconds{webhook},
// controller_runtime_webhook_requests_in_flight{webhook}; webhook is the
// path) and logged on one line: debug when allowed, info when denied or
// refused, error on internal errors.
// A rule or a conversion that panics is counted, unlabelled, as
// controller-runtime counts them: controller_runtime_webhook_panics_total
// and controller_runtime_conversion_webhook_panics_total. [FileCertSource]
// counts its reads of the certificate files, and the failed ones, in
// certwatcher_read_certificate_total and
// certwatcher_read_certificate_errors_total, the series the metrics
// server's certificate shares.
//
// # Conversion
//
// A [Conversion] mounts a CRD conversion endpoint: apiextensions.k8s.io/v1
// ConversionReviews, under the same transport rules, limits
// (Options.MaxConversionBytes, larger: a list is converted in one review),
// metrics and one-line log as the admission hooks. An object that cannot be
// converted makes the review's result Failure with a message naming it.
// Conversions join the fx group [GroupConversions]; [CRDConversionTarget]
// keeps a CRD's conversion caBundle in step with self-issued certificates.
//
// # Transport
//
// HTTPS only, TLS 1.2 or later, HTTP/1.1 unless Options.EnableHTTP2, with
// header, read, write and idle timeouts.
//
// What requests hold in memory is held to a budget: a body's buffer grows
// with the bytes that arrive (a declared Content-Length above the limit is
// refused with 413, but never sizes an allocation), each growth is
// reserved first out of Options.MaxBodyBytesInFlight, and at most
// Options.MaxRequestsInFlight requests are read or served at once. A
// request the budget cannot take is answered at once with 429 and
// Retry-After rather than queued, and counted in
// operator_webhook_requests_rejected_total{webhook,reason} as well as in
// controller_runtime_webhook_requests_total; operator_webhook_body_bytes_in_flight
// shows what is taken. Part of the budget is kept for the first few
// kilobytes of each body, so the API server's ordinary reviews are served
// while large or slow bodies hold the rest.
//
// The port is open to every Pod, not only to the API server, and the Pod
// webhooks fail closed: were the budget first come, first served, one
// Pod's slow connections would make the API server refuse every Pod
// create. So one client address may hold at most half of the request slots,
// as many connections (one past them is reset as soon as it is accepted and
// counted in operator_webhook_connections_rejected_total), and half of what
// large bodies may fill; the rest is always there for other addresses.
// Refusals by this share count under the reasons client_requests and
// client_body_bytes. [Server.Start] binds synchronously
// (a bind error is returned) and serves in the background; [Server.Stop]
// lets requests in flight finish within its context. [Server.ReadinessCheck]
// passes only once the server completes a TLS handshake on its own port
// with a certificate valid now.
//
// # Certificates
//
// The server asks a ports.CertSource on every handshake, so certificates
// change without a restart and without touching open connections:
//
//   - [FileCertSource] (mode "external") serves tls.crt and tls.key from a
//     folder (a mounted Secret, cert-manager) and re-reads them every few
//     seconds, swapping in a pair whose content changed and is valid; start
//     fails when the pair is missing or invalid.
//   - [SelfCertSource] (mode "self") issues its own CA and serving
//     certificate, keeps them in a Secret shared by all replicas with
//     optimistic concurrency, rotates both before expiry without a moment of
//     distrust, and writes the CA bundle into every [CABundleTarget] (the
//     operator's webhook configurations and, through [CRDConversionTarget],
//     the CRD's conversion config).
//
// [Module] wires all of it for fx.
package webhook
