// Package admission holds the operator's admission rules: what its
// webhooks decide, without knowing that they are webhooks.
//
// Each rule implements ports.Defaulter[T] or ports.Validator[T] for one
// kind at one version, with "now" from a ports.Clock where time matters. A
// rule only changes or checks fields; a refusal is ports.Denied, any other
// error means "could not decide". Request facts (namespace, user, dry run)
// come from ports.AdmissionRequestFromContext. Rules are registered, with
// the operations they serve, in internal/app/webhooks.go.
package admission
