// Command mirror is the operator with a controller that owns objects of
// the kind it reconciles: everything cmd/operator runs, plus the mirror
// controller, which keeps a `<name>-mirror` copy of every ConfigMap
// labelled example.test/mirror=true, and a validating rule, scoped to
// those ConfigMaps by an object selector, that keeps them to at most 10
// keys (see package mirror).
//
// It takes the operator's flags. The mirror controller always runs:
// --controllers selects among the operator's own controllers only.
// `mirror manifests` renders what it needs in a cluster (config/, which
// make manifests keeps): the RBAC of its controller and the operator's
// parts, and the webhook configurations, its rule's included.
//
// The example is one domain package and the few lines of wiring in
// main.go; docs/extending.md says how the two watches of one kind share
// the reconciler's ports.
package main
