// Package profiling serves Go's runtime profiles (net/http/pprof) on an
// address of their own, off unless asked for: the operator's
// --pprof-bind-address, controller-runtime's PprofBindAddress.
//
// A profile is what answers "where does the time go" on a live operator:
// a CPU profile under load, the heap of a big cache, the goroutines of a
// stuck shutdown. They are served over plain HTTP without authentication,
// so bind them to localhost (127.0.0.1:6060) and reach them with kubectl
// port-forward:
//
//	go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=30
//
// The server answers from a mux of its own. Importing net/http/pprof also
// registers its handlers on http.DefaultServeMux, which no server of the
// operator serves: each is given its own handler, so the profiles show on
// this address only.
package profiling
