package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns a registry of the operator's own with the Go runtime
// and process collectors already in it. Every adapter registers its metrics
// here, never on prometheus.DefaultRegisterer, so two applications in one
// test process do not share (or fight over) their series.
func NewRegistry() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics registry: %w", err)
		}
	}
	return reg, nil
}
