package webhook

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// Defaults applied to zero Options fields.
const (
	DefaultPort = 9443
	// DefaultMaxRequestBytes fits an UPDATE review: the object and the old
	// object, each up to the API server's 3 MiB limit, plus the envelope.
	DefaultMaxRequestBytes = 7 << 20
	// DefaultMaxConversionBytes is larger: the API server converts a whole
	// list in one ConversionReview.
	DefaultMaxConversionBytes = 64 << 20
	// The in-flight bounds keep a flood of large or slow bodies to a small
	// share of the operator's memory limit (config/manager, 512 MiB).
	DefaultMaxBodyBytesInFlight = 32 << 20
	DefaultMaxRequestsInFlight  = 512
	// The API server waits at most 30 s for a webhook.
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	// The API server keeps connections alive; closing idle ones quickly
	// would cost a TLS handshake per request.
	DefaultIdleTimeout = 120 * time.Second
)

// AnyPort as Options.Port lets the kernel choose a free port (tests).
const AnyPort = -1

// Options configure the webhook server. Zero fields get the defaults above.
type Options struct {
	Host string // empty: every interface
	Port int    // 0: DefaultPort
	// EnableHTTP2 offers HTTP/2 in ALPN. Off by default: HTTP/2 rapid
	// reset (CVE-2023-44487) costs a server far more than a client.
	EnableHTTP2 bool
	// MaxRequestBytes and MaxConversionBytes bound a review's body; larger
	// ones get 413, as do bodies larger than what MaxBodyBytesInFlight
	// keeps for large bodies (budget.go).
	MaxRequestBytes    int64
	MaxConversionBytes int64
	// MaxBodyBytesInFlight and MaxRequestsInFlight bound what all requests
	// hold at once, and MaxRequestsInFlight the open connections too.
	// Each is shared fairly among the client addresses that hold some:
	// when one is full, a request from an address holding its fair share
	// gets 429 with Retry-After, and one from an address below it is
	// served in place of the largest holder's slowest request, whose
	// connection is reset (budget.go).
	MaxBodyBytesInFlight int64
	MaxRequestsInFlight  int

	// ShutdownDelay is how long Stop goes on serving, answering with
	// "Connection: close", before it closes the listener: the API server
	// keeps calling until the Service's endpoints drop this Pod.
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
