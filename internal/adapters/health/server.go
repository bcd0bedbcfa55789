package health

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/httpserve"
)

// Options configure the probe [Server]. The zero value is ready to use.
type Options struct {
	// BindAddress is host:port to listen on; empty means ":8081", "0"
	// disables the server, ":0" picks a free port.
	BindAddress string
	// CheckTimeout bounds each check; 0 means 800ms, below the kubelet's
	// least probe timeout (1s), so a slow check is reported as such
	// instead of the probe timing out without a word.
	CheckTimeout time.Duration
}

// Server serves /healthz and /readyz over plain HTTP.
type Server struct{ *httpserve.Server }

// New returns a server for the liveness and readiness checks. Names must be
// unique within a probe, non-empty and without "/". It does no I/O.
func New(opts Options, healthz, readyz []Check, log *zap.Logger) (*Server, error) {
	opts.BindAddress = cmp.Or(opts.BindAddress, ":8081")
	opts.CheckTimeout = cmp.Or(max(opts.CheckTimeout, 0), 800*time.Millisecond)
	if log == nil {
		log = zap.NewNop()
	}
	mux := http.NewServeMux()
	for name, checks := range map[string][]Check{"healthz": healthz, "readyz": readyz} {
		pr, err := newProbe(name, checks, opts.CheckTimeout, log)
		if err != nil {
			return nil, fmt.Errorf("health server: /%s: %w", name, err)
		}
		mux.Handle("/"+name, pr)
		mux.Handle("/"+name+"/", pr)
	}
	srv, err := httpserve.New("health server", opts.BindAddress, mux, log)
	if err != nil {
		return nil, err
	}
	return &Server{srv}, nil
}

// probe is one of /healthz or /readyz with its checks, answering as the
// Kubernetes API server's probes do.
type probe struct {
	name    string
	checks  []Check
	byName  map[string]Check
	timeout time.Duration
	log     *zap.Logger
}

func newProbe(name string, checks []Check, timeout time.Duration, log *zap.Logger) (*probe, error) {
	p := &probe{name: name, byName: map[string]Check{}, timeout: timeout, log: log}
	for _, c := range checks {
		n := c.Name()
		switch {
		case n == "" || strings.Contains(n, "/"):
			return nil, fmt.Errorf("check name %q must be non-empty and without /", n)
		case p.byName[n] != nil:
			return nil, fmt.Errorf("two checks are called %q", n)
		}
		p.byName[n] = c
		p.checks = append(p.checks, c)
	}
	slices.SortFunc(p.checks, func(a, b Check) int { return strings.Compare(a.Name(), b.Name()) })
	return p, nil
}

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	sub := strings.Trim(strings.TrimPrefix(r.URL.Path, "/"+p.name), "/")
	if sub != "" {
		p.serveOne(w, r, sub)
		return
	}
	p.serveAll(w, r)
}

// serveOne answers /<probe>/<check>.
func (p *probe) serveOne(w http.ResponseWriter, r *http.Request, name string) {
	c, ok := p.byName[name]
	if !ok {
		http.Error(w, fmt.Sprintf("no %s check called %q", p.name, name), http.StatusNotFound)
		return
	}
	if err := p.run(r.Context(), c); err != nil {
		p.log.Info("health check failed", zap.String("probe", p.name), zap.String("check", name), zap.Error(err))
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	_, _ = fmt.Fprint(w, "ok")
}

// serveAll runs every check, concurrently, minus those named in ?exclude=.
func (p *probe) serveAll(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	excluded := map[string]bool{}
	for _, e := range q["exclude"] {
		for n := range strings.SplitSeq(e, ",") {
			excluded[strings.TrimSpace(n)] = true
		}
	}
	errs := make([]error, len(p.checks))
	var wg sync.WaitGroup
	for i, c := range p.checks {
		if excluded[c.Name()] {
			continue
		}
		wg.Go(func() { errs[i] = p.run(r.Context(), c) })
	}
	wg.Wait()

	var out bytes.Buffer
	var failed []string
	for i, c := range p.checks {
		switch {
		case excluded[c.Name()]:
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name())
		case errs[i] != nil:
			fmt.Fprintf(&out, "[-]%s failed: %v\n", c.Name(), errs[i])
			failed = append(failed, c.Name())
			p.log.Info("health check failed", zap.String("probe", p.name), zap.String("check", c.Name()), zap.Error(errs[i]))
		default:
			fmt.Fprintf(&out, "[+]%s ok\n", c.Name())
		}
	}
	_, verbose := q["verbose"]
	if len(failed) > 0 {
		// Failures always list every check, so the kubelet's event says
		// which one broke.
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = out.WriteTo(w)
		_, _ = fmt.Fprintf(w, "%s check failed\n", p.name)
		return
	}
	if !verbose {
		_, _ = fmt.Fprint(w, "ok")
		return
	}
	_, _ = out.WriteTo(w)
	_, _ = fmt.Fprintf(w, "%s check passed\n", p.name)
}

// run runs c within the probe's timeout. A check that ignores its context
// is abandoned (it finishes in the background) so a probe still answers in
// time.
func (p *probe) run(ctx context.Context, c Check) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				res <- fmt.Errorf("panic: %v", v)
			}
		}()
		res <- c.Check(ctx)
	}()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return fmt.Errorf("timed out after %s", p.timeout)
	}
}
