package node_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	watchtools "k8s.io/client-go/tools/watch"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
)

// watchFunc adapts a client's Watch to what RetryWatcher restarts: a watch
// the API server closes (they do, after a while) goes on from its last
// resourceVersion, so no event between two watches is lost.
type watchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

func (f watchFunc) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return f(ctx, opts)
}

// follow lists with list (which handles the objects and returns the
// list's resourceVersion), then runs handle on every event of a watch
// from there, until ctx ends. A watch that ends for good (its
// resourceVersion expired; an update of a CRD rebuilds its storage and
// ends the watches on it) is followed by a list and a watch again.
func follow(ctx context.Context, list func(context.Context) (string, error), w watchFunc, handle func(watch.Event)) error {
	rv, err := list(ctx)
	if err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil {
			if rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, w); err == nil {
				consume(ctx, rw, handle)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			if v, err := list(ctx); err == nil {
				rv = v
			}
		}
	}()
	return nil
}

func consume(ctx context.Context, rw *watchtools.RetryWatcher, handle func(watch.Event)) {
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return
			}
			handle(ev)
		}
	}
}

// chaosStop is one stop of a ChaosPod's Pod: when the test saw its
// deletion begin, and the spec.nextStop of the run it ended.
type chaosStop struct {
	chaos          string
	pod            types.UID
	seen, nextStop time.Time
}

func (s chaosStop) lateness() time.Duration { return s.seen.Sub(s.nextStop) }

// scheduleWatch holds every ChaosPod of a namespace to its schedule while
// it runs: each stop of a ChaosPod's Pod is paired with the nextStop of the
// run it ended, and a run whose nextStop passed more than bound ago with
// its Pod still there is overdue. Stops are seen through a watch of the
// ChaosPods' Pods (the deletionTimestamp the operator's delete sets), at
// times of this machine's clock, which is the operator's and the API
// server's.
type scheduleWatch struct {
	bound time.Duration

	mu sync.Mutex
	// run holds, per ChaosPod and status.lastRun, the spec.nextStop first
	// seen with it: the operator writes the run's nextStop, then its
	// lastRun, so the first object naming a run has that run's stop.
	run map[string]map[time.Time]time.Time
	// next is each ChaosPod's spec.nextStop as last seen.
	next map[string]time.Time
	// stoppedRun is the nextStop of each ChaosPod's last stop seen.
	stoppedRun map[string]time.Time
	created    map[types.UID]time.Time
	stopped    map[types.UID]bool
	// gone is when each ChaosPod's last Pod was seen gone, until the next
	// one is seen created.
	gone    map[string]time.Time
	stops   []chaosStop
	gaps    []gap
	overdue []string
}

// watchSchedules starts a scheduleWatch of ns until ctx ends.
func watchSchedules(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string, bound time.Duration) (*scheduleWatch, error) {
	s := &scheduleWatch{
		bound: bound, run: map[string]map[time.Time]time.Time{}, next: map[string]time.Time{}, stoppedRun: map[string]time.Time{},
		created: map[types.UID]time.Time{}, stopped: map[types.UID]bool{}, gone: map[string]time.Time{},
	}
	chaosPods := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
	err := follow(ctx, func(ctx context.Context) (string, error) {
		list, err := chaosPods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			s.chaosPod(&list.Items[i])
		}
		return list.GetResourceVersion(), nil
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return chaosPods.Watch(ctx, o)
	}, func(ev watch.Event) {
		if o, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Deleted {
			s.chaosPod(o)
		}
	})
	if err != nil {
		return nil, err
	}
	pods := cs.CoreV1().Pods(ns)
	selector := chaospod.PodLabel
	err = follow(ctx, func(ctx context.Context) (string, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			s.pod(watch.Modified, &list.Items[i])
		}
		return list.ResourceVersion, nil
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return pods.Watch(ctx, o)
	}, func(ev watch.Event) {
		if p, ok := ev.Object.(*corev1.Pod); ok {
			s.pod(ev.Type, p)
		}
	})
	if err != nil {
		return nil, err
	}
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				s.checkOverdue(now)
			}
		}
	}()
	return s, nil
}

func (s *scheduleWatch) chaosPod(o *unstructured.Unstructured) {
	next, okNext := nestedTime(o, "spec", "nextStop")
	last, okLast := nestedTime(o, "status", "lastRun")
	s.mu.Lock()
	defer s.mu.Unlock()
	if okNext {
		s.next[o.GetName()] = next
	}
	if okNext && okLast {
		runs := s.run[o.GetName()]
		if runs == nil {
			runs = map[time.Time]time.Time{}
			s.run[o.GetName()] = runs
		}
		if _, ok := runs[last]; !ok {
			runs[last] = next
		}
	}
}

func (s *scheduleWatch) pod(typ watch.EventType, p *corev1.Pod) {
	now := time.Now()
	name := p.Labels[chaospod.PodLabel]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.created[p.UID]; !ok {
		s.created[p.UID] = p.CreationTimestamp.Time
		if g, ok := s.gone[name]; ok {
			s.gaps = append(s.gaps, gap{at: now, d: now.Sub(g)})
			delete(s.gone, name)
		}
	}
	if typ == watch.Deleted {
		s.gone[name] = now
	}
	if s.stopped[p.UID] || (p.DeletionTimestamp == nil && typ != watch.Deleted) {
		return
	}
	s.stopped[p.UID] = true
	next, ok := s.run[name][p.CreationTimestamp.Time]
	if !ok {
		// The run's lastRun was never seen written: judge by the
		// nextStop the ChaosPod has now, the only one it can be.
		next = s.next[name]
	}
	s.stoppedRun[name] = next
	s.stops = append(s.stops, chaosStop{chaos: name, pod: p.UID, seen: now, nextStop: next})
}

// checkOverdue reports each run whose nextStop passed more than bound ago
// and whose Pod has not been stopped.
func (s *scheduleWatch) checkOverdue(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, next := range s.next {
		if next.After(s.stoppedRun[name]) && now.Sub(next) > s.bound {
			msg := fmt.Sprintf("%s: its Pod not stopped %s after nextStop %s", name, s.bound, next.UTC().Format(time.RFC3339))
			if !slices.Contains(s.overdue, msg) {
				s.overdue = append(s.overdue, msg)
			}
		}
	}
}

// since returns the stops seen from t on and the overdue runs so far.
func (s *scheduleWatch) since(t time.Time) (stops []chaosStop, overdue []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stops {
		if !st.seen.Before(t) {
			stops = append(stops, st)
		}
	}
	return stops, slices.Clone(s.overdue)
}

// gap is how long a ChaosPod was seen without a Pod: from its Pod gone to
// the next one created.
type gap struct {
	at time.Time
	d  time.Duration
}

// maxGap is the longest a ChaosPod was seen without its Pod, of the gaps
// that ended from t on.
func (s *scheduleWatch) maxGap(t time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m time.Duration
	for _, g := range s.gaps {
		if !g.at.Before(t) {
			m = max(m, g.d)
		}
	}
	return m
}

// stopsOf counts the stops of each ChaosPod seen from t on.
func (s *scheduleWatch) stopsOf(t time.Time) map[string]int {
	stops, _ := s.since(t)
	n := map[string]int{}
	for _, st := range stops {
		n[st.chaos]++
	}
	return n
}

func nestedTime(o *unstructured.Unstructured, fields ...string) (time.Time, bool) {
	raw, ok, _ := unstructured.NestedString(o.Object, fields...)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, raw)
	return t, err == nil
}

// leadership is one holder of the operator's Lease, from when it was seen
// holding it.
type leadership struct {
	at          time.Time
	holder, pod string
	transitions int32
}

// leaseWatch records every holder of the operator's Lease in turn. A
// holder releasing the Lease (its Pod stopping) leaves it empty for a
// moment; that is no holder.
type leaseWatch struct {
	mu      sync.Mutex
	holders []leadership
}

func watchLease(ctx context.Context, cs kubernetes.Interface) (*leaseWatch, error) {
	l := &leaseWatch{}
	leases := cs.CoordinationV1().Leases(opNamespace)
	sel := fields.OneTermEqualSelector("metadata.name", opLease).String()
	return l, follow(ctx, func(ctx context.Context) (string, error) {
		list, err := leases.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			l.lease(&list.Items[i])
		}
		return list.ResourceVersion, nil
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = sel
		return leases.Watch(ctx, o)
	}, func(ev watch.Event) {
		if lease, ok := ev.Object.(*coordinationv1.Lease); ok {
			l.lease(lease)
		}
	})
}

func (l *leaseWatch) lease(lease *coordinationv1.Lease) {
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return
	}
	holder := *lease.Spec.HolderIdentity
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.holders); n > 0 && l.holders[n-1].holder == holder {
		return
	}
	pod, _, _ := strings.Cut(holder, "_")
	l.holders = append(l.holders, leadership{at: time.Now(), holder: holder, pod: pod, transitions: ptrValue(lease.Spec.LeaseTransitions)})
}

// since returns the holder at t and every one after it.
func (l *leaseWatch) since(t time.Time) []leadership {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := 0
	for i, h := range l.holders {
		if !h.at.After(t) {
			start = i
		}
	}
	return slices.Clone(l.holders[start:])
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// operatorPod is one Pod of the operator's Deployment: its image, when the
// test saw its deletion begin, and its container's log.
type operatorPod struct {
	name, image string
	deleted     time.Time
	log         strings.Builder
}

// podLogs is where the kubelet writes the containers' logs (its
// podLogsDir). The node's API server cannot reach the kubelet's log
// endpoint (it holds no client certificate for it), so the test reads the
// files.
const podLogs = "/var/log/pods"

// operatorPods follows the operator's Pods: each one's image and deletion,
// and its container's whole log, read from the kubelet's log file from its
// start until the test ends. The file is kept open, so the log of a Pod a
// rollout removes (and the kubelet with it) is read to its end.
type operatorPods struct {
	mu   sync.Mutex
	pods map[string]*operatorPod
}

func watchOperatorPods(ctx context.Context, cs kubernetes.Interface) *operatorPods {
	o := &operatorPods{pods: map[string]*operatorPod{}}
	go func() {
		for ctx.Err() == nil {
			list, err := cs.CoreV1().Pods(opNamespace).List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					o.seen(ctx, &list.Items[i])
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return o
}

func (o *operatorPods) seen(ctx context.Context, p *corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	op, ok := o.pods[p.Name]
	if !ok {
		file := filepath.Join(podLogs, p.Namespace+"_"+p.Name+"_"+string(p.UID), p.Spec.Containers[0].Name, "0.log")
		f, err := os.Open(file)
		if err != nil {
			return // not started yet
		}
		op = &operatorPod{name: p.Name, image: imageRef(p.Spec.Containers[0].Image)}
		o.pods[p.Name] = op
		go o.tail(ctx, op, f)
	}
	if p.DeletionTimestamp != nil && op.deleted.IsZero() {
		op.deleted = time.Now()
	}
}

// tail copies the container's log lines (CRI's format: time, stream, tag,
// then the line) into op until ctx ends.
func (o *operatorPods) tail(ctx context.Context, op *operatorPod, f *os.File) {
	defer func() { _ = f.Close() }()
	r := bufio.NewReader(f)
	var partial string
	for {
		line, err := r.ReadString('\n')
		partial += line
		if err == nil {
			fields := strings.SplitN(strings.TrimSuffix(partial, "\n"), " ", 4)
			partial = ""
			if len(fields) == 4 {
				o.mu.Lock()
				op.log.WriteString(fields[3])
				op.log.WriteByte('\n')
				o.mu.Unlock()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// deletedAt is when the test saw the Pod's deletion begin (zero if not).
func (o *operatorPods) deletedAt(pod string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if op, ok := o.pods[pod]; ok {
		return op.deleted
	}
	return time.Time{}
}

// logLines returns, per Pod of image, the lines of its log that match.
func (o *operatorPods) logLines(image string, match func(string) bool) map[string][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string][]string{}
	for name, op := range o.pods {
		if op.image != image {
			continue
		}
		for line := range strings.Lines(op.log.String()) {
			if match(line) {
				out[name] = append(out[name], strings.TrimSpace(line))
			}
		}
	}
	return out
}

// refused tells a log line of a write the API server refused (403: an
// admission policy's denial or a missing permission).
func refused(line string) bool { return strings.Contains(strings.ToLower(line), "forbidden") }

// conversionProbe reads a ChaosPod at v2 every 200 ms: the API server
// converts the stored v1 object through the operator's /convert, which a
// replica must answer at every moment.
type conversionProbe struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string
}

func probeConversion(ctx context.Context, dyn dynamic.Interface, ns, name string) *conversionProbe {
	p := &conversionProbe{}
	go func() {
		for ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			_, err := dyn.Resource(chaosv2.GroupVersionResource).Namespace(ns).Get(rctx, name, metav1.GetOptions{})
			cancel()
			switch {
			case err == nil:
				p.ok.Add(1)
			case ctx.Err() == nil:
				p.failed.Add(1)
				p.mu.Lock()
				if len(p.failures) < 5 {
					p.failures = append(p.failures, err.Error())
				}
				p.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return p
}

func (p *conversionProbe) counts() (ok, failed int64, failures []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok.Load(), p.failed.Load(), slices.Clone(p.failures)
}
