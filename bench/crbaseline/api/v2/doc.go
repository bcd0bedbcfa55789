// Package v2 is the ChaosPod API at v2 (group chaosapps.metamagical.io):
// served, not stored, a reshaped spelling of v1 (spec.podTemplate,
// spec.stop.at, and the new spec.stop.interval, which v1 keeps in an
// annotation).
//
// The types are a copy of the operator's api/chaos/v2, with the conversion
// written as controller-runtime's conversion.Convertible.
//
// +kubebuilder:object:generate=true
// +groupName=chaosapps.metamagical.io
package v2
