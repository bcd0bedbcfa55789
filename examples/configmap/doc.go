// Command configmap is the operator with a third controller added from
// outside: the replicaset and chaospod controllers, the webhooks, metrics
// and probes of cmd/operator, plus the confighash controller, which stamps
// every ConfigMap with the hash of its content (see package confighash).
//
// It takes the operator's flags. The confighash controller always runs:
// --controllers selects among the operator's own controllers only, so
// --controllers=replicaset runs replicaset and confighash. --namespace
// restricts it like the others.
//
// The controller is the domain package confighash and the few lines of
// wiring in main.go; docs/extending.md walks through both.
package main
