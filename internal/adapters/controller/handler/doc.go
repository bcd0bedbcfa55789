// Package handler maps the events of a watched kind to the requests a
// controller reconciles.
//
// A [Mapper] is the "which objects does this change concern?" step between a
// source and the work queue. It carries no reconcile logic and never looks at
// what changed: a request only names an object, and the reconciler reads
// that object's current state itself. Filtering on what changed is the job of
// the predicate package.
//
// Three mappers cover what controllers need:
//
//   - [EnqueueObject]: the object itself (the kind the controller is for);
//   - [EnqueueOwner]: the object's controlling owner of a given group and
//     kind, as recorded in its owner references (Pods → their ReplicaSet);
//   - [MapFunc]: anything else, computed by a function.
//
// Every mapper returns each request at most once per event. On update,
// [EnqueueOwner] and [MapFunc] look at both the old and the new object, so a
// change of owner (or of whatever the function keys on) reaches both sides.
package handler
