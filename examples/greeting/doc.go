// Command greeting is the operator with a custom resource added from
// outside: everything cmd/operator runs, plus the Greeting kind's
// controller (which owns a ConfigMap per Greeting), defaulting webhook and
// validating webhook (see package greeting and its API, package v1 under
// api/).
//
// It takes the operator's flags. The greeting controller always runs:
// --controllers selects among the operator's own controllers only. The
// Greeting CRD (config/crd) must be installed first, and the two webhooks
// registered with the API server at the paths the operator serves them
// (docs/extending.md says how).
//
// The example is one api package, one domain package and the few lines of
// wiring in this file; docs/extending.md walks through all three.
package main
