package metrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// client-go reports every request to package variables that
// metrics.Register sets once per process and REST clients read without
// synchronisation, so the one sink is a fan-out installed from init (before
// any goroutine can make a request). A process with two applications, as in
// tests, counts every request on both registries; with one, as in
// production, the counts are exact.
var restClientResults = &resultFanout{}

func init() {
	clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: restClientResults})
}

// resultFanout forwards client-go's request results to every attached
// counter.
type resultFanout struct {
	mu      sync.RWMutex
	targets []*prometheus.CounterVec
}

var _ clientmetrics.ResultMetric = (*resultFanout)(nil)

// Increment implements client-go's metrics.ResultMetric.
func (f *resultFanout) Increment(_ context.Context, code, method, host string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, c := range f.targets {
		c.WithLabelValues(code, method, host).Inc()
	}
}

func (f *resultFanout) attach(c *prometheus.CounterVec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.targets, c) {
		f.targets = append(f.targets, c)
	}
}

func (f *resultFanout) detach(c *prometheus.CounterVec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.targets = slices.DeleteFunc(f.targets, func(x *prometheus.CounterVec) bool { return x == c })
}

// RESTClientMetrics is client-go's rest_client_requests_total{code,method,host}
// on one registry, under controller-runtime's name and help text so existing
// dashboards work. It counts between Start and Stop.
type RESTClientMetrics struct {
	requests *prometheus.CounterVec
}

// NewRESTClientMetrics registers rest_client_requests_total on reg.
func NewRESTClientMetrics(reg prometheus.Registerer) (*RESTClientMetrics, error) {
	if reg == nil {
		return nil, errors.New("rest client metrics: a registerer is required")
	}
	m := &RESTClientMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
	}
	if err := reg.Register(m.requests); err != nil {
		return nil, fmt.Errorf("rest client metrics: register: %w", err)
	}
	return m, nil
}

// Start attaches the counter to client-go's request results. It fails when
// another package registered client-go's metrics first, since the counter
// would then silently stay at zero.
func (m *RESTClientMetrics) Start(context.Context) error {
	if clientmetrics.RequestResult != clientmetrics.ResultMetric(restClientResults) {
		return errors.New("rest client metrics: client-go's request metrics were registered by another package, rest_client_requests_total would stay empty")
	}
	restClientResults.attach(m.requests)
	return nil
}

// Stop detaches the counter; its values stay on the registry.
func (m *RESTClientMetrics) Stop(context.Context) error {
	restClientResults.detach(m.requests)
	return nil
}
