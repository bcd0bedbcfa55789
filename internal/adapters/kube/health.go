package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/background"
)

// APIServerCheckName names the API server check.
const APIServerCheckName = "apiserver"

// APIServerReachableMetric is the gauge [APIServerProbe] keeps: 1 while the
// API server answers, 0 while it does not, absent until the first probe.
const APIServerReachableMetric = "operator_apiserver_reachable"

// DefaultAPIServerProbeInterval is how often [APIServerProbe] asks by
// default: often enough for an alert on the gauge.
const DefaultAPIServerProbeInterval = 5 * time.Second

// ProbeOptions tune the [APIServerProbe] of the Module.
type ProbeOptions struct {
	Interval time.Duration // 0 means DefaultAPIServerProbeInterval
}

// APIServerCheck fails while the API server does not answer GET /version,
// reusing an answer for a second. It is in neither /readyz nor /healthz:
// admission calls the API server for the operator's own Pods only, an
// unready replica would leave the webhook without endpoints, and a restart
// cannot help.
type APIServerCheck struct {
	client  rest.Interface
	timeout time.Duration
	ttl     time.Duration

	mu      sync.Mutex
	checked time.Time
	last    error
}

// NewAPIServerCheck returns the check, asking through client's discovery
// REST client. It does no I/O.
func NewAPIServerCheck(client kubernetes.Interface) (*APIServerCheck, error) {
	if client == nil || client.Discovery() == nil || client.Discovery().RESTClient() == nil {
		return nil, errors.New("api server check: a kubernetes client with a REST client is required")
	}
	return &APIServerCheck{client: client.Discovery().RESTClient(), timeout: 2 * time.Second, ttl: time.Second}, nil
}

// Name names the check in the probe's log lines.
func (c *APIServerCheck) Name() string { return APIServerCheckName }

// Check asks the API server for /version.
func (c *APIServerCheck) Check(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.checked.IsZero() && time.Since(c.checked) < c.ttl {
		return c.last
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.last = nil
	if err := c.client.Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		c.last = fmt.Errorf("api server unreachable: %w", err)
	}
	c.checked = time.Now()
	return c.last
}

const (
	reachabilityUnknown int32 = iota
	reachable
	unreachable
)

// checker is what the probe runs: an [APIServerCheck], or a test's.
type checker interface {
	Name() string
	Check(ctx context.Context) error
}

// APIServerProbe runs an [APIServerCheck] in the background, showing its
// answer as operator_apiserver_reachable and one log line per change.
type APIServerProbe struct {
	check    checker
	interval time.Duration
	log      *zap.Logger
	desc     *prometheus.Desc

	state atomic.Int32
	loop  background.Loop
}

var _ prometheus.Collector = (*APIServerProbe)(nil)

// NewAPIServerProbe returns a probe running check every interval (0: the
// default) with its gauge on reg, if any. It does no I/O.
func NewAPIServerProbe(check checker, interval time.Duration, reg prometheus.Registerer, log *zap.Logger) (*APIServerProbe, error) {
	if check == nil {
		return nil, errors.New("api server probe: a check is required")
	}
	if interval < 0 {
		return nil, fmt.Errorf("api server probe: interval %s must not be negative", interval)
	}
	if interval == 0 {
		interval = DefaultAPIServerProbeInterval
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &APIServerProbe{
		check:    check,
		interval: interval,
		log:      log,
		desc: prometheus.NewDesc(APIServerReachableMetric,
			"Whether the API server answered the operator's last probe (1) or not (0). Not part of /readyz: admission does not need the API server.",
			nil, nil),
	}
	if reg != nil {
		if err := reg.Register(p); err != nil {
			return nil, fmt.Errorf("api server probe: register %s: %w", APIServerReachableMetric, err)
		}
	}
	return p, nil
}

// Describe implements prometheus.Collector.
func (p *APIServerProbe) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect implements prometheus.Collector: no sample before the first
// probe, since 0 would claim an outage nobody saw.
func (p *APIServerProbe) Collect(ch chan<- prometheus.Metric) {
	switch p.state.Load() {
	case reachable:
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, 1)
	case unreachable:
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, 0)
	}
}

// Reachable reports what the last probe saw; known is false before the
// first one.
func (p *APIServerProbe) Reachable() (ok, known bool) {
	s := p.state.Load()
	return s == reachable, s != reachabilityUnknown
}

// Start probes at once and then every interval until Stop.
func (p *APIServerProbe) Start(context.Context) error {
	return p.loop.Start("api server probe", p.run)
}

// Stop ends probing and waits for a probe in flight, or until ctx ends.
func (p *APIServerProbe) Stop(ctx context.Context) error {
	return p.loop.Stop(ctx, "api server probe")
}

func (p *APIServerProbe) run(ctx context.Context) {
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	var lost time.Time
	for {
		err := p.check.Check(ctx)
		if ctx.Err() != nil {
			return // an answer cut short by Stop says nothing
		}
		lost = p.record(err, lost)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// record stores one answer and logs a change; lost is when the API server
// was first seen unreachable, zero while it answers.
func (p *APIServerProbe) record(err error, lost time.Time) time.Time {
	if err == nil {
		if p.state.Swap(reachable) == unreachable {
			p.log.Info("api server reachable again", zap.Duration("unreachable_for", time.Since(lost).Round(time.Millisecond)))
		}
		return time.Time{}
	}
	if p.state.Swap(unreachable) != unreachable {
		p.log.Info("api server unreachable", zap.String("check", p.check.Name()), zap.Error(err))
		return time.Now()
	}
	return lost
}
