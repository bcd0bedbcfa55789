// Package httpserve runs one http.Server with the lifecycle every server of
// the operator wants: New checks the bind address ("0" turns the server
// off), Start opens the listener itself, so a taken port fails start-up
// instead of a background goroutine, serving runs in the background, and
// Stop drains in-flight requests within the caller's deadline.
//
// It is a library shared by the metrics, health and profiling adapters
// (the webhook server keeps its own, for its TLS and connection limits),
// not an adapter: it knows no port and no Kubernetes type.
package httpserve
