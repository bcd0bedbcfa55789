// Package predicate filters the events a controller's sources deliver,
// before they are mapped to requests, with controller-runtime's semantics:
// the "changed" predicates pass every create and delete and compare the old
// and new object on update. A dropped event is lost for good, so a
// predicate only drops noise: the reconciler converges whatever passes.
package predicate
