// Package v1 is the ChaosPod API at v1 (group chaosapps.metamagical.io), the
// storage version and the conversion hub.
//
// The types are a copy of the operator's api/chaos/v1: controller-runtime's
// conversion webhook needs the Hub method on the hub type itself, and a
// method can only be declared in the package of its type.
//
// +kubebuilder:object:generate=true
// +groupName=chaosapps.metamagical.io
package v1
