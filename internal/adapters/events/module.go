package events

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// GroupSchemes is the fx value group of the scheme functions
// (func(*runtime.Scheme) error) the recorder adds, as a result tag.
const GroupSchemes = `group:"event-schemes"`

// Module provides ports.EventRecorder (and *Recorder), with the scheme
// functions of the group [GroupSchemes] added to its scheme; that is how
// the ChaosPod API joins:
//
//	fx.Supply(fx.Annotate(chaosv1.AddToScheme, fx.ResultTags(events.GroupSchemes)))
//
// It is built before the controllers that record, so it stops after them
// and flushes what they recorded.
var Module = fx.Module("events",
	fx.Provide(
		fx.Annotate(newRecorder,
			fx.As(fx.Self()),
			fx.As(new(ports.EventRecorder)),
		),
	),
)

type recorderParams struct {
	fx.In
	Lifecycle  fx.Lifecycle
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
	p.Lifecycle.Append(fx.StartStopHook(r.Start, r.Stop))
	return r, nil
}
