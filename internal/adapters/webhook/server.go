package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	admissionv1 "k8s.io/api/admission/v1"
)

// CertSource is the server's certificate (internal/adapters/certs): started
// before the server listens, asked on every handshake, stopped after it.
type CertSource interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error)
}

// Server is the HTTPS admission and conversion webhook server. Build it
// with New, then Start and Stop it.
type Server struct {
	opts        Options
	certs       CertSource
	hooks       int // how many, for the log
	conversions int
	log         *zap.Logger
	metrics     *metrics
	mux         *http.ServeMux
	budget      *budget

	draining atomic.Bool // set by Stop: responses close their connection

	mu     sync.Mutex
	conns  map[net.Conn]http.ConnState // guarded by mu
	srv    *http.Server
	addr   *net.TCPAddr
	served chan struct{} // closed when Serve has returned
}

// New returns a server for hooks and conversions that presents
// certificates from certs and records metrics on reg. It does no I/O.
func New(opts Options, certs CertSource, hooks []Hook, reg prometheus.Registerer, logger *zap.Logger, conversions ...Conversion) (*Server, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("webhook server options: %w", err)
	}
	if certs == nil || reg == nil || logger == nil {
		return nil, errors.New("webhook server: certificate source, metrics registerer and logger are required")
	}
	paths, err := validate(hooks, conversions)
	if err != nil {
		return nil, fmt.Errorf("webhook server: %w", err)
	}
	m, err := newMetrics(reg, paths)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, certs: certs, log: logger, metrics: m, mux: http.NewServeMux(), conns: map[net.Conn]http.ConnState{},
		budget: newBudget(opts.MaxBodyBytesInFlight, opts.MaxRequestsInFlight, m.bodyBytes, m.evictedConns),
		hooks:  len(hooks), conversions: len(conversions),
	}
	for _, h := range hooks {
		s.mux.Handle(h.Path, s.leased(h.Path, s.handle(h.Path, "admission request", m.panics, s.serveAdmission(h))))
	}
	for _, c := range conversions {
		s.mux.Handle(c.Path, s.leased(c.Path, s.handle(c.Path, "conversion request", m.conversionPanics, s.serveConversion(c))))
	}
	return s, nil
}

// Start starts the certificate source (its error is returned), binds the
// port (so is a bind error) and serves in the background.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("webhook server already started")
	}
	if err := s.certs.Start(ctx); err != nil {
		return fmt.Errorf("webhook certificate: %w", err)
	}
	port := s.opts.Port
	if port == AnyPort {
		port = 0
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(port)))
	if err != nil {
		return errors.Join(fmt.Errorf("webhook server: %w", err), s.certs.Stop(ctx))
	}
	ln = &shareListener{Listener: ln, budget: s.budget, refused: s.metrics.rejectedConns}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(s.opts.EnableHTTP2)
	// The timeouts bound how long a slow client holds a connection, and
	// with it a request slot and its body's budget.
	srv := &http.Server{
		Handler: http.HandlerFunc(s.serveHTTP),
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.certs.GetCertificate,
		},
		Protocols:         protocols,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         s.trackConn,
		ConnContext:       withConn,
		ErrorLog:          log.New(httpErrorWriter{s.log}, "", 0),
	}
	s.srv, s.addr, s.served = srv, ln.Addr().(*net.TCPAddr), make(chan struct{})
	go func(served chan struct{}) {
		defer close(served)
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("webhook server stopped serving", zap.Error(err))
		}
	}(s.served)
	s.log.Info("webhook server started", zap.String("address", s.addr.String()), zap.Bool("http2", s.opts.EnableHTTP2), zap.Int("hooks", s.hooks), zap.Int("conversions", s.conversions))
	return nil
}

// Stop goes on serving for Options.ShutdownDelay (bounded by ctx), closing
// each connection after its response, then waits within ctx for requests
// in flight, and stops the certificate source. Before Start it is a no-op.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	srv, served := s.srv, s.served
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	if s.opts.ShutdownDelay > 0 && !s.draining.Swap(true) {
		s.log.Info("webhook server draining", zap.Duration("delay", s.opts.ShutdownDelay))
		t := time.NewTimer(s.opts.ShutdownDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	s.draining.Store(true)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	// Shutdown leaves a new connection (no request read yet) open for five
	// seconds; it carries no request, so it is closed too.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		s.closeNewConns()
		select {
		case err = <-shut:
			break wait
		case <-tick.C:
		}
	}
	if err != nil {
		_ = srv.Close()
		err = fmt.Errorf("stop webhook server: %w", err)
	}
	<-served
	s.log.Info("webhook server stopped")
	return errors.Join(err, s.certs.Stop(ctx))
}

// trackConn keeps the connections' states for closeNewConns.
func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	default:
		s.conns[c] = state
	}
}

// closeNewConns closes the connections that have not sent a request.
func (s *Server) closeNewConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, state := range s.conns {
		if state == http.StateNew {
			_ = c.Close()
		}
	}
}

// serveHTTP routes a request; while draining, every answer closes its
// connection, so clients reconnect to another replica.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Connection", "close")
	}
	s.mux.ServeHTTP(w, r)
}

// Addr is the address the server listens on, nil before Start.
func (s *Server) Addr() *net.TCPAddr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// httpErrorWriter sends net/http's own complaints (TLS handshake failures,
// which is how a wrong caBundle shows up) to zap with a constant message.
type httpErrorWriter struct{ log *zap.Logger }

func (w httpErrorWriter) Write(p []byte) (int, error) {
	w.log.Info("webhook http server error", zap.String("error", strings.TrimSpace(string(p))))
	return len(p), nil
}

// outcome is what one request came to, for the response, the metrics and
// the log line.
type outcome struct {
	code    int
	problem string // plain-text answer when review is nil
	review  any
	level   zapcore.Level // of the log line of a review
	fields  []zap.Field   // what the log line says of the request
	// The admission request and its answer, once known: their log fields
	// are built only when the line is written.
	req  *admissionv1.AdmissionRequest
	resp *admissionv1.AdmissionResponse
}

// notAllowed is the log field of a review that got no answer; shared, never
// modified.
var notAllowed = []zap.Field{zap.Bool("allowed", false)}

// logFields is what the log line says of the request.
func (o *outcome) logFields() []zap.Field {
	switch {
	case o.resp != nil:
		return responseFields(o.req, o.resp)
	case o.req != nil:
		return append(requestFields(o.req), notAllowed...)
	}
	return o.fields
}

// handle serves one endpoint with what every endpoint shares: metrics,
// panic recovery and one log line, msg, per request.
func (s *Server) handle(path, msg string, panics prometheus.Counter, serve func(w http.ResponseWriter, r *http.Request, out *outcome)) http.Handler {
	series := s.metrics.forPath(path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		series.inFlight.Inc()
		start := time.Now()
		out := &outcome{}
		defer func() {
			p := recover()
			if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) { // net/http's way to abort a response: let it through
				series.end(start, http.StatusInternalServerError)
				panic(p)
			}
			level := out.level
			var extra []zap.Field
			switch {
			case p != nil:
				panics.Inc()
				out.code, level = http.StatusInternalServerError, zapcore.ErrorLevel
				http.Error(w, "internal error", out.code)
				extra = []zap.Field{zap.Any("panic", p), zap.Stack("stack")}
			case out.review == nil:
				http.Error(w, out.problem, out.code)
				level = zapcore.InfoLevel
				if out.code >= http.StatusInternalServerError {
					level = zapcore.ErrorLevel
				}
				extra = []zap.Field{zap.String("message", out.problem)}
			default:
				out.code = writeJSON(w, out.code, out.review)
			}
			series.end(start, out.code)
			// The line's fields are built only when it is written: an
			// allowed review logs at debug, off in production.
			if ce := s.log.Check(level, msg); ce != nil {
				fields := append([]zap.Field{zap.String("webhook", path), zap.Int("code", out.code), zap.Duration("latency", time.Since(start))}, out.logFields()...)
				ce.Write(append(fields, extra...)...)
			}
		}()
		serve(w, r, out)
	})
}

// serveAdmission answers an AdmissionReview. Anything that is not a v1
// AdmissionReview carrying a request is answered with an HTTP error: there
// is no UID to answer to.
func (s *Server) serveAdmission(h Hook) func(http.ResponseWriter, *http.Request, *outcome) {
	timeout := time.Duration(h.TimeoutSeconds) * time.Second
	return func(w http.ResponseWriter, r *http.Request, out *outcome) {
		out.fields = notAllowed
		body, ok := s.readBody(w, r, s.opts.MaxRequestBytes, "an admission.k8s.io/v1 AdmissionReview", out)
		if !ok {
			return
		}
		var review admissionv1.AdmissionReview
		if err := unmarshal(body, &review); err != nil {
			out.code, out.problem = http.StatusBadRequest, fmt.Sprintf("decode AdmissionReview: %v", err)
			return
		}
		if review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview" {
			out.code, out.problem = http.StatusBadRequest, fmt.Sprintf("got apiVersion %q kind %q; this server speaks only admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind)
			return
		}
		req := review.Request
		if req == nil {
			out.code, out.problem = http.StatusBadRequest, "AdmissionReview without a request"
			return
		}
		out.req = req
		if req.UID == "" {
			out.code, out.problem = http.StatusBadRequest, "AdmissionReview request without a uid"
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		resp := h.Admitter.Admit(ctx, req)
		if resp == nil {
			resp = errored(http.StatusInternalServerError, errors.New("the webhook gave no answer"))
		}
		resp.UID = req.UID
		out.code, out.review = http.StatusOK, &admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		// Allowed requests at debug (a busy cluster creates many Pods),
		// denials at info, internal errors at error.
		switch {
		case resp.Allowed:
			out.level = zapcore.DebugLevel
		case resp.Result != nil && resp.Result.Code >= http.StatusInternalServerError:
			out.level = zapcore.ErrorLevel
		default:
			out.level = zapcore.InfoLevel
		}
		out.resp = resp
	}
}

// requestFields are what a review's log line says of its request.
func requestFields(req *admissionv1.AdmissionRequest) []zap.Field {
	return []zap.Field{
		zap.String("uid", string(req.UID)),
		zap.String("kind", req.Kind.Kind),
		zap.String("namespace", req.Namespace),
		zap.String("name", req.Name),
		zap.String("operation", string(req.Operation)),
		zap.String("user", req.UserInfo.Username),
	}
}

// responseFields add what the answer was.
func responseFields(req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse) []zap.Field {
	fields := append(requestFields(req), zap.Bool("allowed", resp.Allowed))
	if resp.Patch != nil {
		fields = append(fields, zap.Int("patchBytes", len(resp.Patch)))
	}
	if len(resp.Warnings) > 0 {
		fields = append(fields, zap.Strings("warnings", resp.Warnings))
	}
	switch {
	case resp.Result != nil && resp.Result.Code >= http.StatusInternalServerError:
		fields = append(fields, zap.String("error", resp.Result.Message))
	case !resp.Allowed && resp.Result != nil:
		fields = append(fields, zap.String("message", resp.Result.Message))
	}
	return fields
}

// leased gives each request a lease on the budget, carried by its body for
// readBody, and releases it once next has returned.
func (s *Server) leased(path string, next http.Handler) http.Handler {
	rejected := map[string]prometheus.Counter{}
	for _, reason := range rejectedReasons {
		rejected[reason] = s.metrics.rejected.WithLabelValues(path, reason)
	}
	evicted := s.metrics.evicted.WithLabelValues(path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orig := r.Body
		body := &leasedBody{ReadCloser: orig, lease: lease{budget: s.budget, client: clientAddr(r.RemoteAddr), onEvict: evicted}, rejected: rejected}
		if c := connOf(r.Context()); c != nil {
			body.conn, body.client = c, c.client
		}
		defer body.release()
		r.Body = body
		// net/http looks at its own body type to decide what to drain.
		defer func() { r.Body = orig }()
		next.ServeHTTP(w, r)
	})
}

// leasedBody is a request body with its request's lease.
type leasedBody struct {
	io.ReadCloser
	lease
	rejected map[string]prometheus.Counter // by reason
}

// readBody applies the transport rules every endpoint shares: POST, JSON,
// a non-empty body within limit, read within the budget. When it fails it
// sets out's HTTP error; what names the expected payload in that message.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64, what string, out *outcome) ([]byte, bool) {
	fail := func(code int, problem string) ([]byte, bool) {
		out.code, out.problem = code, problem
		return nil, false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return fail(http.StatusMethodNotAllowed, "only POST is served")
	}
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return fail(http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q is not served; send application/json", ct))
	}
	lb := r.Body.(*leasedBody)
	// A body the budget could never hold would be refused with 429 for
	// ever; 413 tells the caller not to retry.
	limit = min(limit, s.budget.maxBody())
	if r.ContentLength > limit {
		hangUp(w)
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes exceeds the limit of %d", r.ContentLength, limit))
	}
	// refuse answers 429 with a Retry-After, as the API server's own
	// max-in-flight limit does, and closes the connection rather than
	// read on: what the client still sends is what the budget had no
	// room for.
	refuse := func(reason, why string) ([]byte, bool) {
		lb.rejected[reason].Inc()
		w.Header().Set("Retry-After", "1")
		hangUp(w)
		return fail(http.StatusTooManyRequests, "the webhook server is busy: "+why+"; retry later")
	}
	// evicted answers a request given up for another address; its
	// connection is reset already, so the answer is for the metrics and
	// the log.
	evicted := func() ([]byte, bool) {
		hangUp(w)
		return fail(http.StatusTooManyRequests, "the webhook server is busy: "+errEvicted.Error()+"; retry later")
	}
	if err := lb.enter(); err != nil {
		switch {
		case errors.Is(err, errEvicted):
			return evicted()
		case errors.Is(err, errShareTaken):
			return refuse(rejectedClientRequests, "too many requests in flight from this address")
		}
		return refuse(rejectedRequests, "too many requests in flight")
	}
	body, err := lb.readAll(lb.ReadCloser, r.ContentLength, limit)
	if err != nil {
		lb.dropBytes()
		switch {
		case errors.Is(err, errEvicted) || lb.wasEvicted():
			return evicted()
		case errors.Is(err, errShareSpent):
			return refuse(rejectedClientBodyBytes, "too many request body bytes in flight from this address")
		case errors.Is(err, errOverBudget):
			return refuse(rejectedBodyBytes, "too many request body bytes in flight")
		}
		hangUp(w)
		if errors.Is(err, errTooLarge) {
			return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes", limit))
		}
		return fail(http.StatusBadRequest, fmt.Sprintf("read request body: %v", err))
	}
	if len(body) == 0 {
		return fail(http.StatusBadRequest, "empty request body; send "+what)
	}
	return body, true
}

// hangUp closes the connection after the answer to a request whose body
// was not read to its end: net/http then answers before it reads on, and
// drains at most 256 KiB so that the caller reads the answer.
func hangUp(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
}

// isJSON tells whether a Content-Type is application/json, parsing only
// spellings other than the API server's.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// writeJSON sends v with code and returns the status code actually sent.
func writeJSON(w http.ResponseWriter, code int, v any) int {
	body, err := encodeConfig.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body) // the API server went away: nothing left to tell it
	return code
}
