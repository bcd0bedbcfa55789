package webhook

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// Defaults applied by Options.withDefaults to zero fields.
const (
	DefaultPort = 9443
	// DefaultMaxRequestBytes fits the largest review the API server sends:
	// an UPDATE carries the object and the old object, each up to the API
	// server's 3 MiB request limit, plus the envelope.
	DefaultMaxRequestBytes = 7 << 20
	// DefaultMaxConversionBytes is larger: the API server converts a whole
	// list in one ConversionReview.
	DefaultMaxConversionBytes = 64 << 20
	// DefaultMaxBodyBytesInFlight and DefaultMaxRequestsInFlight bound
	// what requests hold at once, so that a flood of large or slow bodies
	// keeps the operator well under half of its 256 MiB memory limit
	// (config/manager/manager.yaml). Every request in flight costs its
	// connection's buffers and goroutine on top of its body.
	DefaultMaxBodyBytesInFlight = 32 << 20
	DefaultMaxRequestsInFlight  = 512
	// The API server waits at most 30 s for a webhook; a request still
	// running after that has no one to answer to.
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	// The API server keeps connections to webhooks alive; closing idle
	// ones quickly would cost a TLS handshake per request.
	DefaultIdleTimeout = 120 * time.Second
)

// AnyPort as Options.Port lets the kernel choose a free port (tests); Addr
// reports it.
const AnyPort = -1

// Options configure the webhook server. Zero fields get the defaults above.
type Options struct {
	// Host to bind; empty means every interface.
	Host string
	// Port to bind; 0 means DefaultPort, AnyPort a free one.
	Port int
	// EnableHTTP2 offers HTTP/2 in ALPN. Off by default: HTTP/2 rapid
	// reset (CVE-2023-44487) costs a server far more than a client.
	EnableHTTP2 bool
	// MaxRequestBytes bounds a request body; larger ones get 413.
	MaxRequestBytes int64
	// MaxConversionBytes bounds a ConversionReview body; larger ones get 413.
	MaxConversionBytes int64
	// MaxBodyBytesInFlight bounds the bytes that all request bodies being
	// read or served hold at once; a request the budget cannot spare its
	// next bytes gets 429 with Retry-After. A reserve of smallBodyBytes per
	// request slot, up to half of the budget, is kept for the first
	// smallBodyBytes of each body (budget.go), and one client address may
	// fill half of the rest, so no body can be larger than that half plus
	// smallBodyBytes, whatever the two limits above say: a larger one gets
	// 413.
	MaxBodyBytesInFlight int64
	// MaxRequestsInFlight bounds the requests read or served at once;
	// more get 429 with Retry-After. One client address may hold half of
	// them, and open as many connections.
	MaxRequestsInFlight int

	// ShutdownDelay is how long Stop goes on serving before it closes the
	// listener, answering with "Connection: close" meanwhile. The API
	// server keeps calling a webhook until it learns the endpoint is gone
	// (a Service's endpoints follow the Pod's readiness a little later), and
	// a call that finds the port closed fails its admission. Zero: none.
	ShutdownDelay time.Duration

	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

func (o Options) withDefaults() Options {
	o.Port = cmp.Or(o.Port, DefaultPort)
	o.MaxRequestBytes = cmp.Or(o.MaxRequestBytes, DefaultMaxRequestBytes)
	o.MaxConversionBytes = cmp.Or(o.MaxConversionBytes, DefaultMaxConversionBytes)
	o.MaxBodyBytesInFlight = cmp.Or(o.MaxBodyBytesInFlight, DefaultMaxBodyBytesInFlight)
	o.MaxRequestsInFlight = cmp.Or(o.MaxRequestsInFlight, DefaultMaxRequestsInFlight)
	o.ReadHeaderTimeout = cmp.Or(o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, DefaultReadTimeout)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, DefaultWriteTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Port < AnyPort || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", o.Port))
	}
	if o.MaxRequestBytes < 0 || o.MaxConversionBytes < 0 {
		errs = append(errs, errors.New("negative request size limit"))
	}
	if o.MaxBodyBytesInFlight < 0 || o.MaxRequestsInFlight < 0 {
		errs = append(errs, errors.New("negative in-flight limit"))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, errors.New("negative shutdown delay"))
	}
	return errors.Join(errs...)
}
