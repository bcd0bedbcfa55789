// Package admission holds the operator's admission rules: what the webhooks
// decide, without knowing that they are webhooks.
//
// # Shape
//
// Every rule implements an inbound port, ports.Mutator[T] or
// ports.Validator[T] (the ChaosPod rules once per served version, as
// methods the composition root registers through ports.MutatorFunc and
// ports.ValidatorFunc), and is a pure function of the decoded request: operation, old
// and new object (and "now" through ports.Clock where time matters). Rules
// never modify the request's objects: a mutator returns a modified copy, and
// the webhook adapter turns the difference into a JSON patch. A denial is a
// verdict, never an error; an error means "could not decide".
//
// # Pod rules
//
// PodAnnotator sets the annotation example-mutating-admission-webhook: "foo"
// on every Pod that is created or updated, keeping every other annotation.
// PodValidator denies a created or updated Pod that lacks that annotation or
// carries another value, so a Pod that slipped past the mutator (for example
// because a later mutating webhook removed the annotation) is caught.
// Deletions and connections are always admitted.
//
// OperatorPodValidator checks the Pods the operator itself creates (its
// webhook is matched for the operator's identity only): a created Pod's
// controller must be a ChaosPod that exists in the Pod's namespace with the
// name and UID its owner reference gives, and is not being deleted. It reads
// ChaosPods through a ports.Reader, and a miss is a denial: the chaospod
// controller retries the create.
package admission
