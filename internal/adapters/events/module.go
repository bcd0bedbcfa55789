package events

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Module provides ports.EventRecorder (and *Recorder).
//
// It consumes kubeclient.Interface, *zap.Logger, an optional [Options], and
// the scheme functions of the value group "event-schemes"
// (func(*runtime.Scheme) error), which are added to Options.AddToScheme;
// that is how the ChaosPod API joins:
//
//	fx.Supply(fx.Annotate(chaosv1.AddToScheme, fx.ResultTags(`group:"event-schemes"`)))
//
// Recording starts in OnStart and stops in OnStop.
var Module = fx.Module("events",
	fx.Provide(
		fx.Annotate(newRecorder,
			fx.OnStart(func(ctx context.Context, r *Recorder) error { return r.Start(ctx) }),
			fx.OnStop(func(ctx context.Context, r *Recorder) error { return r.Stop(ctx) }),
			fx.As(fx.Self()),
			fx.As(new(ports.EventRecorder)),
		),
	),
)

type recorderParams struct {
	fx.In
	Client  kubeclient.Interface
	Logger  *zap.Logger
	Options Options                       `optional:"true"`
	Schemes []func(*runtime.Scheme) error `group:"event-schemes"`
}

func newRecorder(p recorderParams) (*Recorder, error) {
	opts := p.Options
	opts.AddToScheme = append(append([]func(*runtime.Scheme) error(nil), opts.AddToScheme...), p.Schemes...)
	return New(p.Client, opts, p.Logger.Named("events"))
}
