package events

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/lifecycle"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// GroupSchemes is the fx value group of the scheme functions
// (func(*runtime.Scheme) error) the recorder adds, as a result tag.
const GroupSchemes = `group:"event-schemes"`

// Module provides ports.EventRecorder (and *Recorder).
//
// It consumes kubernetes.Interface, *zap.Logger, an optional [Options], and
// the scheme functions of the value group "event-schemes"
// (func(*runtime.Scheme) error), which are added to Options.AddToScheme;
// that is how the ChaosPod API joins:
//
//	fx.Supply(fx.Annotate(chaosv1.AddToScheme, fx.ResultTags(events.GroupSchemes)))
//
// With a prometheus.Registerer in the graph it exports
// operator_events_dropped_total{cause} there. Recording runs in the phase
// lifecycle.Events.
var Module = fx.Module("events",
	fx.Provide(
		fx.Annotate(newRecorder,
			fx.As(fx.Self()),
			fx.As(new(ports.EventRecorder)),
		),
	),
	lifecycle.Register[*Recorder]("events", lifecycle.Events),
)

type recorderParams struct {
	fx.In
	Client     kubernetes.Interface
	Logger     *zap.Logger
	Options    Options                       `optional:"true"`
	Schemes    []func(*runtime.Scheme) error `group:"event-schemes"`
	Registerer prometheus.Registerer         `optional:"true"`
}

func newRecorder(p recorderParams) (*Recorder, error) {
	opts := p.Options
	opts.AddToScheme = append(append([]func(*runtime.Scheme) error(nil), opts.AddToScheme...), p.Schemes...)
	r, err := New(p.Client, opts, p.Logger.Named("events"))
	if err != nil {
		return nil, err
	}
	if p.Registerer != nil {
		if err := p.Registerer.Register(r.DroppedCollector()); err != nil {
			return nil, fmt.Errorf("event recorder: register %s: %w", DroppedMetric, err)
		}
	}
	return r, nil
}
