// Package v1 is version v1 of the ChaosPod API (group
// chaosapps.metamagical.io): the storage version and the conversion hub.
//
// # Why a hub
//
// Every other version converts to and from v1 only (see package v2), so n
// versions need n-1 conversions rather than n². v1 keeps the original
// example's spelling: spec.template, spec.nextStop and status.lastRun.
//
// # Registration
//
// [AddToScheme] registers the types into a scheme the caller owns; this
// package never touches client-go's global scheme. zz_generated.deepcopy.go
// is written by controller-gen (`make generate`).
//
// +kubebuilder:object:generate=true
// +groupName=chaosapps.metamagical.io
package v1
