// Package admission holds the operator's admission rules: what its
// webhooks decide, without knowing that they are webhooks.
//
// Each rule is one type implementing ports.Defaulter[T] or
// ports.Validator[T] for one kind at one version (the ChaosPod rules once
// per served version), with "now" from a ports.Clock where time matters.
// The webhook adapter decodes the request, calls the method of its
// operation with objects that are set, and turns a defaulter's change into
// a JSON patch; a rule only changes or checks fields. A refusal is
// ports.Denied; any other error means "could not decide". Request facts a
// rule needs (namespace, user, dry run) come from
// ports.AdmissionRequestFromContext. Rules are registered, with the
// operations they serve, in internal/app/webhooks.go.
package admission
