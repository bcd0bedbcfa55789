// Package webhook is the driving adapter that serves admission webhooks and
// CRD conversions over HTTPS, turning AdmissionReviews into calls on the
// domain's ports.Defaulter[T] and ports.Validator[T] and their answers back
// into reviews.
//
// The composition root declares one table of [Hook] rows (built with
// [Mutating] or [Validating]) in the fx group [GroupHooks], and
// [Conversion] endpoints in [GroupConversions]. The server mounts every
// row; [MutatingWebhookConfiguration] and [ValidatingWebhookConfiguration]
// render the same rows as manifests, which a test holds config/webhook to.
//
// Requests are measured under controller-runtime's metric names
// (controller_runtime_webhook_*; label webhook is the path) and logged on
// one line each. What requests hold in memory is bounded by a budget of
// which one client address may hold half (budget.go); a request it cannot
// take gets 429 with Retry-After. [Server.ReadinessCheck] passes once the
// server completes a TLS handshake on its own port with a certificate valid
// now. [Module] wires it all for fx.
package webhook
