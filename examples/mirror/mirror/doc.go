// Package mirror is the domain of the mirror example: a controller that
// keeps a copy of every ConfigMap that asks for one, and the admission rule
// that keeps such ConfigMaps small.
//
// # What it promises
//
//   - [Reconciler]: a ConfigMap labelled [Label]=true has a mirror, the
//     ConfigMap named [Name] of it in the same namespace, with the
//     same data and binaryData and the source as its controller (an owner
//     reference), so that deleting the source deletes the mirror through
//     garbage collection. A mirror carries no label, so it is never
//     mirrored itself. Once the source loses the label, or is gone, its
//     mirror is deleted; a ConfigMap of the mirror's name that the source
//     does not control is left alone, with a terminal error while the
//     source asks for a mirror.
//   - [Validator]: a ConfigMap labelled [Label]=true has at most [MaxKeys]
//     keys in data and binaryData together; any other ConfigMap is
//     admitted, whatever the webhook's object selector sends.
//
// Like the operator's own domain packages it knows only ports
// (internal/ports), API types (k8s.io/api, k8s.io/apimachinery) and the
// standard library; the tests hold it to that rule. The wiring that puts it
// in an operator is examples/mirror/main.go.
package mirror
