// Command pause is the Pod sandbox's process: it holds the Pod's namespaces
// open until it is told to stop, and reaps the orphans it inherits. It does
// what Kubernetes' pause.c does, in Go, so the node tier builds its sandbox
// image from source without a registry.
package main
