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
// Requests are measured under controller-runtime's metric names, logged on
// one line each and held to a budget of memory and request slots
// (budget.go). [Module] wires the server for fx; [Server.ReadinessCheck] is
// its readiness check.
package webhook
