// Package v1 is version v1 of the Greeting API (group
// greetings.example.hexagonal-operator.io), the custom resource of the
// example in examples/greeting.
//
// A Greeting names someone (spec.name) and, optionally, how to greet them
// (spec.salutation); the example's controller writes the greeting into
// status.message.
//
// # Where the rules live
//
// The schema (the kubebuilder markers in types.go) says only that
// spec.name is required. The lengths, and the default salutation, are the
// example's admission rules (package greeting's Validator and Defaulter):
// the API server checks the schema before it calls validating webhooks, so
// a length limit in the schema would refuse an object with the schema's
// message before the rule could say why, and the rule is tested where the
// domain is, on plain values.
//
// [AddToScheme] registers the types into a scheme the caller owns; this
// package never touches client-go's global scheme. zz_generated.deepcopy.go
// and the CRD in examples/greeting/config/crd are written by controller-gen
// (`make generate`).
//
// +kubebuilder:object:generate=true
// +groupName=greetings.example.hexagonal-operator.io
package v1
