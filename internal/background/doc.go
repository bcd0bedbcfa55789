// Package background runs one goroutine from a Start to a Stop, the shape
// of every loop the adapters own (certificate refresh, API server probe,
// leader election): it outlives the start context and ends only at Stop.
//
// It is a library, not an adapter: it knows no port and no Kubernetes type.
package background
