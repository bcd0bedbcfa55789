package profiling

import (
	"cmp"
	"net/http"
	"net/http/pprof"

	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/httpserve"
)

// DisabledBindAddress turns the server off; it is also the default.
const DisabledBindAddress = httpserve.DisabledAddress

// Options configure the profile [Server]. The zero value is off.
type Options struct {
	// BindAddress is host:port to listen on; empty or "0" disables the
	// server, ":0" picks a free port.
	BindAddress string
}

// Server serves the runtime profiles over plain HTTP.
type Server struct{ *httpserve.Server }

// New returns a profile server. It does no I/O.
func New(opts Options, log *zap.Logger) (*Server, error) {
	opts.BindAddress = cmp.Or(opts.BindAddress, DisabledBindAddress)
	// Index serves every named profile (heap, goroutine, ...) under its
	// path; the other four are handlers of their own.
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv, err := httpserve.New("profiling server", opts.BindAddress, mux, log)
	if err != nil {
		return nil, err
	}
	return &Server{srv}, nil
}
