// Command crdtrim drops the descriptions of embedded Kubernetes types from
// generated CustomResourceDefinitions, in place.
//
// controller-gen copies the documentation of every field of an embedded
// type into the CRD: a ChaosPod's PodTemplateSpec, in each of two versions,
// makes the CRD more than a megabyte of YAML. `kubectl apply` (client-side)
// keeps the whole object in its last-applied annotation, which the API
// server caps at 256 KiB, so such a CRD cannot be installed the way users
// type it. The embedded type's documentation is one `kubectl explain pod`
// away; the CRD's own fields keep theirs, and every schema keeps its types
// and validation.
//
// Usage (what `make generate` runs after controller-gen):
//
//	go run ./hack/crdtrim -embedded spec.template,spec.podTemplate config/crd/bases/*.yaml
//
// -embedded lists the properties, as dotted paths from a version's
// openAPIV3Schema, whose subtrees lose their descriptions; the property
// itself keeps its own. The output is written as controller-gen writes it
// (a "---" line, then keys in order), so `make verify` can diff it.
package main
