package certreads

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Counters count every read of a certificate and key pair, and those that
// failed (a file missing or unreadable, a pair that does not parse).
type Counters struct {
	Total, Errors prometheus.Counter
}

// New returns counters registered nowhere.
func New() Counters {
	return Counters{
		Total:  prometheus.NewCounter(prometheus.CounterOpts{Name: "certwatcher_read_certificate_total", Help: "Total number of certificate reads"}),
		Errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "certwatcher_read_certificate_errors_total", Help: "Total number of certificate read errors"}),
	}
}

// Register registers the counters on reg, or returns those another server
// registered there already, so that every server counts into one series.
func Register(reg prometheus.Registerer) (Counters, error) {
	c := New()
	var err error
	if c.Total, err = register(reg, c.Total); err != nil {
		return Counters{}, err
	}
	if c.Errors, err = register(reg, c.Errors); err != nil {
		return Counters{}, err
	}
	return c, nil
}

func register(reg prometheus.Registerer, c prometheus.Counter) (prometheus.Counter, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(prometheus.Counter); ok {
			return existing, nil
		}
	}
	return nil, fmt.Errorf("register certificate read metrics: %w", err)
}
