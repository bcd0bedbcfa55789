// Package v2 is version v2 of the ChaosPod API (group
// chaosapps.metamagical.io): served, not stored, a reshaped spelling of v1.
//
// # Shape
//
// spec.podTemplate was v1's spec.template, spec.stop.at was spec.nextStop,
// and spec.stop.interval (how long each Pod lives) is new. v1 keeps the
// interval in the [v1.StopIntervalAnnotation] annotation, so conversion is
// lossless both ways.
//
// # Conversion
//
// [ToHub] and [FromHub] are pure functions between v2 and the v1 hub for
// Go callers. [ToHubJSON] and [FromHubJSON] make the same changes on an
// object decoded from JSON, moving the renamed fields and nothing else; the
// operator's /convert webhook uses them, so the API server stores exactly
// what a client wrote.
//
// +kubebuilder:object:generate=true
// +groupName=chaosapps.metamagical.io
package v2
