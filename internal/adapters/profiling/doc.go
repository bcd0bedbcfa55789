// Package profiling serves Go's runtime profiles (net/http/pprof) on an
// address of their own, off unless asked for: the operator's
// --pprof-bind-address, controller-runtime's PprofBindAddress. They are
// plain HTTP without authentication, so bind them to localhost and reach
// them with kubectl port-forward:
//
//	go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=30
//
// The server answers from a mux of its own, so the handlers net/http/pprof
// registers on http.DefaultServeMux (which no server of the operator
// serves) stay unreachable.
package profiling
