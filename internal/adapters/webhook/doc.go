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
// one line each and held to a budget of connections, request slots and
// memory (budget.go), shared max-min fairly among client addresses: when
// the server is full, an address below its share is served in place of
// the largest holder's slowest request, so that no number of hostile
// addresses can take admission away from the API server, short of more
// addresses than slots. New connections are also held to a TLS handshake
// rate per address (clientshare.go). [Module] wires the server for fx;
// [Server.ReadinessCheck] is its readiness check.
package webhook
