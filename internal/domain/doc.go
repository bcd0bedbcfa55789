// Package domain is the inside of the hexagon: what the operator decides,
// independent of how objects are read, written, queued or served.
//
// Subpackages hold one concern each: replicaset (label ReplicaSets),
// chaospod (the ChaosPod pod lifecycle) and admission (webhook rules). They
// import only internal/ports, the api types, the standard library and the
// types of k8s.io/api and k8s.io/apimachinery; test/architecture enforces it.
package domain
