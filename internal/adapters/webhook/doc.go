// Package webhook is the driving adapter that serves admission webhooks and
// CRD conversions over HTTPS: it turns AdmissionReviews into typed calls on
// the domain's admission ports (ports.Defaulter[T], ports.Validator[T]) and
// their answers back into reviews.
//
// # Registration
//
// One table of [Hook] values says, per webhook, its path, what answers it
// ([Admitter], built from a typed rule with [Mutating] or [Validating]), and
// how the API server should call it. The package knows no workload: the
// composition root declares every row (internal/app's webhooks.go) and
// hands the table to the server through the fx group [GroupHooks]. The
// server mounts every row; [MutatingWebhookConfiguration] and
// [ValidatingWebhookConfiguration] render the same rows as manifests, and a
// test holds config/webhook to them, so code and YAML cannot drift. A
// [Conversion] in [GroupConversions] mounts a ConversionReview endpoint
// under the same rules.
//
// # Requests
//
// Only POSTed JSON v1 reviews with a request and a UID reach a rule;
// anything else gets an HTTP client error that says what was wrong (405,
// 415, 400, 413 above Options.MaxRequestBytes or MaxConversionBytes). A
// request the hook does not serve is denied with its UID; a rule that
// errors is a denial with code 500; a rule that panics is an HTTP 500,
// logged with its stack, and the server carries on. A mutation is answered
// with a minimal JSON patch; an object a conversion cannot convert makes
// the review's result Failure with a message naming it.
//
// Every request is measured under controller-runtime's metric names
// (controller_runtime_webhook_requests_total{webhook,code}, _latency_seconds,
// _requests_in_flight, _panics_total and
// controller_runtime_conversion_webhook_panics_total; webhook is the path)
// and logged on one line: debug when allowed, info when denied or refused,
// error on internal errors.
//
// # Transport
//
// HTTPS only, TLS 1.2 or later, HTTP/1.1 unless Options.EnableHTTP2, with
// header, read, write and idle timeouts, and the certificate of a
// [CertSource] that the server starts with itself. What requests hold in
// memory is held to a budget (budget.go), of which one client address may
// hold only a share: a request the budget cannot take gets 429 with
// Retry-After, counted in
// operator_webhook_requests_rejected_total{webhook,reason}.
//
// [Server.Start] binds synchronously and serves in the background;
// [Server.Stop] lets requests in flight finish within its context.
// [Server.ReadinessCheck] passes only once the server completes a TLS
// handshake on its own port with a certificate valid now. [Module] wires
// it for fx.
package webhook
