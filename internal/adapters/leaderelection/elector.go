package leaderelection

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/hexagonal-operator/operator/internal/background"
)

// Defaults applied by [Options] fields left zero; they are client-go's and
// controller-runtime's.
const (
	DefaultID            = "hexagonal-operator-leader"
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// JitterFactor spreads the standbys' tries: each waits between RetryPeriod
// and RetryPeriod × (1 + JitterFactor) before trying again. It is
// client-go's.
const JitterFactor = leaderelection.JitterFactor

// minLeaseDuration guards against a subtle split brain: the Lease stores
// its duration in whole seconds and standbys notice renewals only when the
// renew time's second changes, so a 1.5s lease is a 1s lease that a standby
// may consider expired while the leader is renewing it.
const minLeaseDuration = 2 * time.Second

// healthTolerance is how long past its lease the leader may go without
// renewing before /healthz fails, as in controller-runtime.
const healthTolerance = 20 * time.Second

// Options configure the [Elector].
type Options struct {
	// Enabled turns leader election on. Off, this replica leads at once.
	Enabled bool
	// ID names the Lease; empty means DefaultID.
	ID string
	// Namespace holds the Lease; required when Enabled.
	Namespace string
	// LeaseDuration, RenewDeadline and RetryPeriod have client-go's
	// meaning; zero means the Default* values.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Identity is this replica's name in the Lease; empty means
	// "<hostname>_<random UUID>", unique across restarts.
	Identity string
	// OnLost is called (once, in its own goroutine) when leadership is
	// lost other than by Stop. Nil only logs.
	OnLost func()
}

func (o Options) withDefaults() (Options, error) {
	o.ID = cmp.Or(o.ID, DefaultID)
	o.LeaseDuration = cmp.Or(o.LeaseDuration, DefaultLeaseDuration)
	o.RenewDeadline = cmp.Or(o.RenewDeadline, DefaultRenewDeadline)
	o.RetryPeriod = cmp.Or(o.RetryPeriod, DefaultRetryPeriod)
	if o.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("leader election: identity: %w", err)
		}
		o.Identity = host + "_" + string(uuid.NewUUID())
	}
	return o, nil
}

// validate says, in the flags' terms, what client-go's elector would
// refuse, and the lease too short for whole seconds that it would accept.
func (o Options) validate() error {
	switch {
	case o.Namespace == "":
		return errors.New("leader election: a namespace for the Lease is required")
	case o.RetryPeriod <= 0 || o.RenewDeadline <= 0 || o.LeaseDuration <= 0:
		return fmt.Errorf("leader election: lease duration (%s), renew deadline (%s) and retry period (%s) must be positive", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	case o.LeaseDuration < minLeaseDuration:
		return fmt.Errorf("leader election: lease duration (%s) must be at least %s", o.LeaseDuration, minLeaseDuration)
	case o.LeaseDuration <= o.RenewDeadline:
		return fmt.Errorf("leader election: lease duration (%s) must be longer than the renew deadline (%s)", o.LeaseDuration, o.RenewDeadline)
	case o.RenewDeadline <= time.Duration(JitterFactor*float64(o.RetryPeriod)):
		return fmt.Errorf("leader election: renew deadline (%s) must be longer than the retry period (%s) times the jitter factor %.1f", o.RenewDeadline, o.RetryPeriod, JitterFactor)
	}
	return nil
}

// Elector runs client-go's leader elector on a coordination.k8s.io/v1
// Lease.
type Elector struct {
	opts     Options
	log      *zap.Logger
	le       *leaderelection.LeaderElector // nil when disabled
	status   prometheus.Gauge              // nil when disabled
	slowpath prometheus.Counter            // nil when disabled

	elected     chan struct{}
	electedOnce sync.Once
	lostOnce    sync.Once

	mu       sync.Mutex // guards what follows
	leading  bool
	finished bool // the elector has returned: a late start must not lead
	stopping bool

	loop background.Loop // runs client-go's elector until Stop
}

// New returns an elector for opts, registering its metrics on reg when
// enabled; disabled, it is elected from the start. It does no I/O.
func New(client kubernetes.Interface, reg prometheus.Registerer, opts Options, log *zap.Logger) (*Elector, error) {
	if log == nil {
		log = zap.NewNop()
	}
	e := &Elector{log: log, elected: make(chan struct{})}
	if !opts.Enabled {
		e.opts = opts
		close(e.elected)
		return e, nil
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("leader election: a Kubernetes client is required")
	}
	if reg == nil {
		return nil, errors.New("leader election: a metrics registerer is required")
	}
	e.opts = opts
	e.log = log.With(zap.String("lease", opts.Namespace+"/"+opts.ID), zap.String("identity", opts.Identity))

	// controller-runtime's names and help, on our own registry.
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
	slow := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "leader_election_slowpath_total",
		Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"})
	for _, c := range []prometheus.Collector{vec, slow} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("leader election: register metrics: %w", err)
		}
	}
	e.status = vec.WithLabelValues(opts.ID)
	e.slowpath = slow.WithLabelValues(opts.ID) // exposed at zero from the start

	config := leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.ID},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: opts.Identity},
		},
		LeaseDuration:   opts.LeaseDuration,
		RenewDeadline:   opts.RenewDeadline,
		RetryPeriod:     opts.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            opts.ID,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { e.startedLeading() },
			OnStoppedLeading: e.stoppedLeading,
		},
	}
	le, err := newLeaderElector(config, leaderMetric{e})
	if err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	e.le = le
	return e, nil
}

// Elected is closed once this replica leads.
func (e *Elector) Elected() <-chan struct{} { return e.elected }

// IsLeader reports whether this replica holds the Lease right now (always
// true when disabled).
func (e *Elector) IsLeader() bool {
	if e.le == nil {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

// Identity is this replica's name in the Lease (empty when disabled).
func (e *Elector) Identity() string { return e.opts.Identity }

// Name names the elector as a liveness check.
func (e *Elector) Name() string { return "leader-election" }

// Check is the liveness check: a leader that has not
// renewed its Lease for well past its duration is wedged.
func (e *Elector) Check(context.Context) error {
	if e.le == nil {
		return nil
	}
	return e.le.Check(healthTolerance)
}

// Start campaigns for the Lease in the background.
func (e *Elector) Start(context.Context) error {
	if e.le == nil {
		return nil
	}
	e.log.Info("campaigning for leadership")
	return e.loop.Start("leader election", e.le.Run)
}

// Stop stops campaigning and, when leading, releases the Lease. It returns
// when the Lease has been released or ctx ends.
func (e *Elector) Stop(ctx context.Context) error {
	e.mu.Lock()
	e.stopping = true
	e.mu.Unlock()
	return e.loop.Stop(ctx, "leader election")
}

// startedLeading runs, in a goroutine of client-go's, once the Lease is
// acquired.
func (e *Elector) startedLeading() {
	e.mu.Lock()
	if e.finished {
		e.mu.Unlock()
		return
	}
	e.leading = true
	e.mu.Unlock()
	e.status.Set(1)
	e.log.Info("became leader")
	e.electedOnce.Do(func() { close(e.elected) })
}

// stoppedLeading runs when the elector returns: on Stop (after the
// release), or when it could not renew the Lease.
func (e *Elector) stoppedLeading() {
	e.mu.Lock()
	wasLeading, stopping := e.leading, e.stopping
	e.leading, e.finished = false, true
	e.mu.Unlock()
	e.status.Set(0)
	switch {
	case stopping && wasLeading:
		e.log.Info("released leadership")
	case !stopping:
		e.lostOnce.Do(func() {
			e.log.Error("leadership lost", zap.Error(errors.New("the lease was not renewed within the renew deadline")))
			if e.opts.OnLost != nil {
				go e.opts.OnLost()
			}
		})
	}
}
