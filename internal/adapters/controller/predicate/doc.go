// Package predicate filters the events a controller's sources deliver, before
// they are mapped to requests.
//
// A [Predicate] answers one question per event: is this change worth a
// reconcile? It is the place to drop noise (status-only writes, resyncs,
// label churn nobody reads) so the work queue and the API server see less
// traffic. It is never the place for reconcile logic: a dropped event is
// lost for good, and the reconciler must still converge from current state
// whatever the predicates let through.
//
// The semantics follow controller-runtime's predicate package so that people
// who know it are not surprised:
//
//   - the "changed" predicates ([GenerationChanged], [ResourceVersionChanged],
//     [LabelChanged], [AnnotationChanged]) let every create and delete through
//     and compare the old and new object on update;
//   - [And] with no predicates is true, [Or] with none is false, [Not]
//     inverts every answer;
//   - [Funcs] leaves an unset function as "true".
//
// One difference: [LabelChanged] and [AnnotationChanged] treat a nil map and
// an empty map as equal, because the API server does too.
package predicate
