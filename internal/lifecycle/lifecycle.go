package lifecycle

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"go.uber.org/fx"
)

// Phase is a step of the start sequence. Parts start phase by phase in the
// order of the constants and stop in the reverse order; parts of one phase
// start in the order of their names.
type Phase int

// The phases, in start order.
const (
	// Logging: klog and fx logs go to zap before anything else logs.
	Logging Phase = iota
	// APIServer: start-up fails, naming the server, when it cannot be
	// reached, before anything listens or watches.
	APIServer
	// Permissions: start-up fails, naming each missing grant, when the
	// operator may not do what its enabled parts will do.
	Permissions
	// Definitions: start-up fails when a CRD the operator serves is
	// missing.
	Definitions
	// Telemetry: client-go's request metrics, /metrics and the API server
	// probe; stopped late, so a shutdown is still observed.
	Telemetry
	// Caches: the informers list and watch in the background.
	Caches
	// Certificates: the webhook serving certificate is loaded or issued.
	Certificates
	// Webhooks: the webhook server binds its port, on every replica.
	Webhooks
	// Election: the elector campaigns. It stops before the webhook server
	// drains, so a SIGTERM hands the Lease to a standby at once.
	Election
	// Events: the Event recorder; it stops after the controllers, and so
	// flushes what they recorded.
	Events
	// Probes: /healthz, /readyz and the profiles.
	Probes
	// Controllers: last to start, first to stop (no new reconcile, wait
	// for those in flight). Their workers wait for their sources to sync
	// and for leadership.
	Controllers
)

var phaseNames = [...]string{"logging", "apiserver", "permissions", "definitions", "telemetry", "caches",
	"certificates", "webhooks", "election", "events", "probes", "controllers"}

func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Part is one thing with a lifecycle. Start must not block: it returns
// once the part runs (a server listens, a check passed) and leaves
// background work running; Stop ends it within the context's deadline.
// Either may be nil.
type Part struct {
	Name  string
	Phase Phase
	Start func(context.Context) error
	Stop  func(context.Context) error
}

// Group is the fx value group of the parts, as a result tag.
const Group = `group:"lifecycle"`

// Runner is anything with the Start and Stop of a [Part].
type Runner interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Register provides T's Start and Stop as a part of phase, called name.
func Register[T Runner](name string, phase Phase) fx.Option {
	return fx.Provide(fx.Annotate(func(r T) Part {
		return Part{Name: name, Phase: phase, Start: r.Start, Stop: r.Stop}
	}, fx.ResultTags(Group)))
}

type runParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Parts     []Part `group:"lifecycle"`
}

// Run appends the parts' hooks to fx's lifecycle in phase order.
func Run(p runParams) {
	parts := slices.Clone(p.Parts)
	slices.SortStableFunc(parts, func(a, b Part) int {
		return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Name, b.Name))
	})
	for _, part := range parts {
		p.Lifecycle.Append(fx.Hook{OnStart: part.Start, OnStop: part.Stop})
	}
}

// Module runs the parts of the group. Put it in the application once.
var Module = fx.Module("lifecycle", fx.Invoke(Run))

// Value groups of the health checks (ports.HealthCheck), as result tags
// for the constructors that join them: the health server serves the first
// at /healthz (liveness: only a restart helps) and the second at /readyz
// (readiness: this replica can serve admission).
const (
	GroupHealthz = `group:"healthz"`
	GroupReadyz  = `group:"readyz"`
)
