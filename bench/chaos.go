package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// chaosGrace is how long the watches keep reading after the window (and
// again after the last stop due in it was seen), so that the ChaosPod
// versions written before the deletions read have arrived before
// latenesses are matched up.
const chaosGrace = 2 * time.Second

// chaos: v1 ChaosPods without a nextStop, so the operator gives each Pod a
// random 10 s or 20 s life (or, with --chaos-interval, v2 ChaosPods with
// that spec.stop.interval), watched for --chaos-duration. deleted is Pod
// deletions per second in the window. Every stop due in the window (each
// spec.nextStop up to its end that a ChaosPod carried once a Pod was
// started for it: the defaulter's nextStop at creation is replaced when
// the first Pod starts) must be observed: the watches read on after the
// window until each is, for up to --timeout, and fail naming how many
// never were; one at least must fall due. Every Pod stopped by then must
// be replaced too (the watches read on until it is), and the Pod watch
// must show the creations the ChaosPod controller's rule asks for, no
// more and no fewer (see creations): created is how many the window's
// schedule required, one per ChaosPod and one after each stop due in the
// window, the same for any two binaries doing the same work. For every
// deletion seen in the window, and every
// later one whose stop was due in it, the lateness is when the Pod watch
// saw it go minus the spec.nextStop its ChaosPod had when the Pod was
// deleted. A negative lateness is a Pod stopped before its time, counted
// as early, which fails the run.
//
// "Had when the Pod was deleted" is decided by resourceVersion, not by
// arrival order: the two watches are separate streams, so the ChaosPod
// update that follows a deletion can arrive first. On one etcd every
// resourceVersion is a revision of the same store, so ChaosPod versions and
// Pod deletions order totally by it.
//
// Stops bunch on whole seconds (spec.nextStop has second precision), so
// the tail is the busiest second's last stop. busiest is how many stops
// were due in that second and busiest-late the latest of them; limit is
// the same number of Pods deleted at once by the driver at a whole
// second, with no operator running (after the run, see stopBurst):
// when its watch saw the last deletion. No controller stops a second's
// Pods sooner than the API server deletes them and the watch reports it.
func runChaos(ctx context.Context, e *env, bin, label string) (result, error) {
	res, busiest, err := observeChaos(ctx, e, bin, label)
	if err != nil || busiest.n == 0 {
		return res, err // only a warm-up may see no stop
	}
	limit, err := e.stopBurst(ctx, label, busiest.n)
	if err != nil {
		return nil, err
	}
	return append(res,
		countOf("busiest", busiest.n),
		durationOf("busiest-late", busiest.worst),
		durationOf("limit", limit),
		ratioOf("busiest/limit", busiest.worst.Seconds()/limit.Seconds()),
	), nil
}

// observeChaos runs the operator on the ChaosPods and returns the
// latenesses and the busiest second; the operator has stopped and the
// namespace is gone when it returns.
func observeChaos(ctx context.Context, e *env, bin, label string) (_ result, busiest stopSecond, err error) {
	const concurrency = 16
	n := e.opts.n(100)
	ns, cleanup, err := e.scratch(ctx, "chaos", label)
	if err != nil {
		return nil, busiest, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	op, err := e.startOperator(bin, "chaos", "chaospod")
	if err != nil {
		return nil, busiest, err
	}
	defer func() { err = errors.Join(err, op.stop()) }()
	if _, err := op.waitReady(ctx); err != nil {
		return nil, busiest, err
	}

	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	pods, chaosPods, err := e.watchChaos(watchCtx, ns)
	if err != nil {
		return nil, busiest, err
	}
	defer pods.Stop()
	defer chaosPods.Stop()

	began := time.Now()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("chaos-%04d", i)
	}
	created := make(chan error, 1)
	go func() {
		created <- parallel(ctx, n, concurrency, func(ctx context.Context, i int) error {
			return e.createChaosPod(ctx, ns, names[i])
		})
	}()

	obs := chaosObservation{history: map[string][]stopVersion{}, lives: map[string][]podEvent{}}
	dur := e.opts.chaosDuration
	window := time.After(dur)
	// After the window: grace, then settle polls until every stop due in
	// the window has been seen, which sets cut; then another grace, and
	// settle polls until every Pod stopped up to cut has its replacement;
	// deadline bounds it all.
	var (
		windowEnd, cut  time.Time
		grace, deadline <-chan time.Time
		settle          <-chan time.Time
	)
	settleTick := time.NewTicker(100 * time.Millisecond)
	defer settleTick.Stop()
	alive := time.NewTicker(time.Second)
	defer alive.Stop()
	for done := false; !done; {
		select {
		case ev, ok := <-pods.ResultChan():
			if !ok {
				return nil, busiest, fmt.Errorf("pod watch in %s ended", ns)
			}
			if err := obs.pod(ev, time.Now(), windowEnd.IsZero()); err != nil {
				return nil, busiest, err
			}
		case ev, ok := <-chaosPods.ResultChan():
			if !ok {
				return nil, busiest, fmt.Errorf("chaospod watch in %s ended", ns)
			}
			if err := obs.chaosPod(ev); err != nil {
				return nil, busiest, err
			}
		case err := <-created:
			if err != nil {
				return nil, busiest, err
			}
		case <-window:
			windowEnd = time.Now()
			grace = time.After(chaosGrace)
			deadline = time.After(e.opts.timeout)
		case <-grace:
			settle = settleTick.C
		case <-settle:
			if !cut.IsZero() {
				done = len(obs.unreplaced(names, cut)) == 0
			} else if _, _, missing, err := obs.stops(windowEnd, time.Now()); err == nil && missing == 0 {
				cut = time.Now()
				settle = nil
				grace = time.After(chaosGrace)
			}
		case <-deadline:
			if !cut.IsZero() {
				left := obs.unreplaced(names, cut)
				return nil, busiest, fmt.Errorf("%d ChaosPods without their Pod %s after the %s window (never created, or stopped by the time every stop due in it was seen and not replaced); the first: %s", len(left), e.opts.timeout, dur, strings.Join(left[:min(5, len(left))], ", "))
			}
			_, _, missing, err := obs.stops(windowEnd, time.Now())
			if err != nil {
				return nil, busiest, err
			}
			return nil, busiest, fmt.Errorf("%d stops due in the %s window not seen %s after it; the first:\n%s", missing, dur, e.opts.timeout, strings.Join(obs.unmatched, "\n"))
		case <-alive.C:
			if err := op.alive(); err != nil {
				return nil, busiest, err
			}
		case <-ctx.Done():
			return nil, busiest, ctx.Err()
		}
	}
	late, due, missing, err := obs.stops(windowEnd, cut)
	switch {
	case err != nil:
		return nil, busiest, err
	case missing > 0:
		return nil, busiest, fmt.Errorf("%d stops due in the %s window not seen; the first:\n%s", missing, dur, strings.Join(obs.unmatched, "\n"))
	case len(due) == 0 && label != "warmup":
		// A warm-up's shorter window may end before any stop with v1's
		// random lives; a measured run without one measured nothing.
		return nil, busiest, fmt.Errorf("no stop fell due in the %s window: lengthen --chaos-duration or shorten --chaos-interval", dur)
	}
	early := 0
	for _, d := range late {
		if d < 0 {
			early++
		}
	}
	seconds := stopSeconds(late, due)
	if early > 0 {
		return nil, busiest, fmt.Errorf("%d of %d Pods stopped before their ChaosPod's nextStop", early, len(late))
	}
	creations, err := obs.creations(names, windowEnd, cut)
	if err != nil {
		return nil, busiest, err
	}
	if want := n + len(due); creations != want {
		return nil, busiest, fmt.Errorf("%d Pod creations for the %d ChaosPods' starts and the stops due in the %s window, want %d: one per ChaosPod and one after each of the %d stops", creations, n, dur, want, len(due))
	}
	logf("chaos: %d pods created for %d chaospods and the %d stops due in %s, all seen and replaced; %d deleted in it (since the first create %s ago)", creations, n, len(due), dur, obs.deletedInWindow, time.Since(began).Round(time.Second))
	logf("chaos: latest seconds: %s", describeSeconds(seconds, 3))
	return result{
		paramOf("n", n),
		countOf("created", creations),
		rateOf("deleted", obs.deletedInWindow, dur),
		durationOf("late-p50", percentile(late, 50)),
		durationOf("late-p99", percentile(late, 99)),
		durationOf("late-max", percentile(late, 100)),
		countOf("early", early),
	}, busiestOf(seconds), nil
}

// watchChaos opens the Pod and ChaosPod watches of ns, each from a list, so
// they begin before the first ChaosPod exists.
func (e *env) watchChaos(ctx context.Context, ns string) (pods, chaosPods watch.Interface, err error) {
	podClient := e.cs.CoreV1().Pods(ns)
	podList, err := podClient.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list pods in %s: %w", ns, err)
	}
	pods, err = watchFrom(ctx, podList.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return podClient.Watch(ctx, o)
	})
	if err != nil {
		return nil, nil, err
	}
	chaosClient := e.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
	chaosList, err := chaosClient.List(ctx, metav1.ListOptions{})
	if err != nil {
		pods.Stop()
		return nil, nil, fmt.Errorf("list chaospods in %s: %w", ns, err)
	}
	chaosPods, err = watchFrom(ctx, chaosList.GetResourceVersion(), func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return chaosClient.Watch(ctx, o)
	})
	if err != nil {
		pods.Stop()
		return nil, nil, err
	}
	return pods, chaosPods, nil
}

// createChaosPod creates a v1 ChaosPod with a valid template and no
// nextStop or, with --chaos-interval, a v2 one with that
// spec.stop.interval.
func (e *env) createChaosPod(ctx context.Context, ns, name string) error {
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "chaos-bench"}},
		Spec:       podSpec(),
	}
	var obj any = &chaosv1.ChaosPod{
		TypeMeta:   metav1.TypeMeta{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       chaosv1.ChaosPodSpec{Template: template},
	}
	gvr := chaosv1.GroupVersionResource
	if e.opts.chaosInterval > 0 {
		obj = &chaosv2.ChaosPod{
			TypeMeta:   metav1.TypeMeta{APIVersion: chaosv2.SchemeGroupVersion.String(), Kind: chaosv1.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: chaosv2.ChaosPodSpec{
				PodTemplate: template,
				Stop:        chaosv2.ChaosPodStop{Interval: &metav1.Duration{Duration: e.opts.chaosInterval}},
			},
		}
		gvr = chaosv2.GroupVersionResource
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("encode chaospod %s/%s: %w", ns, name, err)
	}
	if _, err := e.dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create chaospod %s/%s: %w", ns, name, err)
	}
	return nil
}

// stopVersion is one version of a ChaosPod's spec.nextStop.
type stopVersion struct {
	rv       uint64
	nextStop time.Time // zero when unset
	// started says a Pod was started for this ChaosPod (status.lastRun
	// set): before that, nextStop is the defaulter's, which the operator
	// replaces when it starts the first Pod, and no stop is due.
	started bool
}

// deletion is a Pod deletion seen by the Pod watch.
type deletion struct {
	name string
	rv   uint64
	seen time.Time
}

// podEvent is a Pod's creation or deletion as the Pod watch saw it.
type podEvent struct {
	created bool // else deleted
	rv      uint64
	seen    time.Time
}

// chaosObservation collects what the two watches saw.
type chaosObservation struct {
	// deletedInWindow counts Pod deletions seen in the window.
	deletedInWindow int
	// deletions are every Pod deletion seen, in the window and after.
	deletions []deletion
	// lives holds every creation and deletion of each Pod name, in the
	// order the Pod watch saw them, which is resourceVersion order.
	lives map[string][]podEvent
	// history holds every version of each ChaosPod's nextStop, in
	// resourceVersion order (a watch delivers one object's versions in
	// order).
	history map[string][]stopVersion
	// unmatched describes the first stops found missing, for the error.
	unmatched []string
}

// describe tells what the watches saw of one ChaosPod whose stop at
// nextStop was not matched: its nextStop versions and its Pod's deletions.
func (o *chaosObservation) describe(name string, nextStop time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s stop due %s; versions:", name, nextStop.UTC().Format(time.TimeOnly))
	for _, v := range o.history[name] {
		at := "none"
		if !v.nextStop.IsZero() {
			at = v.nextStop.UTC().Format(time.TimeOnly)
		}
		if !v.started {
			at += " (no pod yet)"
		}
		fmt.Fprintf(&b, " %d→%s", v.rv, at)
	}
	b.WriteString("; pod deletions seen:")
	for _, d := range o.deletions {
		if d.name == name {
			fmt.Fprintf(&b, " %d at %s", d.rv, d.seen.UTC().Format("15:04:05.000"))
		}
	}
	return b.String()
}

// pod records a Pod watch event seen at seen; inWindow says whether the
// window is still open.
func (o *chaosObservation) pod(ev watch.Event, seen time.Time, inWindow bool) error {
	switch ev.Type {
	case watch.Error:
		return fmt.Errorf("pod watch: %v", ev.Object)
	case watch.Added, watch.Deleted:
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("pod watch: unexpected %T", ev.Object)
		}
		rv, err := strconv.ParseUint(pod.ResourceVersion, 10, 64)
		if err != nil {
			return fmt.Errorf("pod %s: resourceVersion %q is not a number: %w", pod.Name, pod.ResourceVersion, err)
		}
		// A ChaosPod's Pod carries the ChaosPod's name.
		o.lives[pod.Name] = append(o.lives[pod.Name], podEvent{created: ev.Type == watch.Added, rv: rv, seen: seen})
		if ev.Type == watch.Added {
			return nil
		}
		if inWindow {
			o.deletedInWindow++
		}
		o.deletions = append(o.deletions, deletion{name: pod.Name, rv: rv, seen: seen})
	}
	return nil
}

// unreplaced names, in the order of names, the ChaosPods whose Pod the
// watch has yet to see: none created yet, or the last one's deletion seen
// at or before cut and its replacement not.
func (o *chaosObservation) unreplaced(names []string, cut time.Time) []string {
	var out []string
	for _, name := range names {
		events := o.lives[name]
		if len(events) == 0 {
			out = append(out, name)
		} else if last := events[len(events)-1]; !last.created && !last.seen.After(cut) {
			out = append(out, name)
		}
	}
	return out
}

// creations checks the Pod watch's creations against the rule of the
// ChaosPod controller (internal/domain/chaospod): each ChaosPod runs one
// Pod of its own name, created when it has none, so a ChaosPod's Pod is
// created once at its start and once after every stop (a deletion at its
// nextStop), and at no other time. It returns how many creations the
// schedule of the window required and the watch saw: each ChaosPod's
// first, and the replacement of each stop due in the window (at or
// before windowEnd). It fails on a Pod named after no ChaosPod of names,
// on a ChaosPod without a Pod, on a second creation or deletion in a row
// (a Pod the watch missed), on two deletions for one stop (a Pod more
// than the stops require), and on a Pod stopped at or before cut whose
// replacement was not seen (one fewer).
//
// Only a Pod stopped after cut may still await its replacement, which
// bounds what is in flight at the window's edge: the watches read on
// after cut for chaosGrace, then until every ChaosPod has had a Pod and
// every Pod stopped up to cut has been replaced (see unreplaced), so what
// is left are stops of that last stretch, at most one per ChaosPod (its
// Pod bears its name), each a reconcile away from its replacement. Those
// stops are not matched to a nextStop: the ChaosPod versions written
// before them may still be on their way.
func (o *chaosObservation) creations(names []string, windowEnd, cut time.Time) (int, error) {
	for _, name := range slices.Sorted(maps.Keys(o.lives)) {
		if !slices.Contains(names, name) {
			return 0, fmt.Errorf("pod %s created, which no ChaosPod names: more Pods than the ChaosPods require", name)
		}
	}
	created := 0
	for _, name := range names {
		events := o.lives[name]
		if len(events) == 0 || !events[0].created {
			return 0, fmt.Errorf("chaospod %s never had its Pod created", name)
		}
		created++
		stops := map[time.Time]bool{}
		for k := 1; k < len(events); k++ {
			ev, prev := events[k], events[k-1]
			if ev.created == prev.created {
				return 0, fmt.Errorf("chaospod %s: its Pod %s twice in a row (resourceVersions %d and %d)", name, createdOrDeleted(ev.created), prev.rv, ev.rv)
			}
			if ev.created || ev.seen.After(cut) {
				continue
			}
			if k == len(events)-1 {
				return 0, fmt.Errorf("chaospod %s: its Pod deleted at %s (resourceVersion %d) was never replaced", name, ev.seen.UTC().Format("15:04:05.000"), ev.rv)
			}
			at, err := o.current(deletion{name: name, rv: ev.rv, seen: ev.seen})
			if err != nil {
				return 0, err
			}
			if stops[at] {
				return 0, fmt.Errorf("chaospod %s: its Pods deleted twice for the stop due %s (the second at resourceVersion %d): more Pods than its stops require", name, at.UTC().Format(time.TimeOnly), ev.rv)
			}
			stops[at] = true
			if !at.After(windowEnd) {
				created++ // the stop's replacement, events[k+1]
			}
		}
	}
	return created, nil
}

func createdOrDeleted(created bool) string {
	if created {
		return "created"
	}
	return "deleted"
}

func (o *chaosObservation) chaosPod(ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return fmt.Errorf("chaospod watch: %v", ev.Object)
	case watch.Added, watch.Modified:
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("chaospod watch: unexpected %T", ev.Object)
		}
		var cp chaosv1.ChaosPod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cp); err != nil {
			return fmt.Errorf("decode chaospod %s: %w", u.GetName(), err)
		}
		rv, err := strconv.ParseUint(cp.ResourceVersion, 10, 64)
		if err != nil {
			return fmt.Errorf("chaospod %s: resourceVersion %q is not a number: %w", cp.Name, cp.ResourceVersion, err)
		}
		v := stopVersion{rv: rv, started: cp.Status.LastRun != nil}
		if cp.Spec.NextStop != nil {
			v.nextStop = cp.Spec.NextStop.Time
		}
		o.history[cp.Name] = append(o.history[cp.Name], v)
	}
	return nil
}

// stops matches every deletion seen up to cut with the nextStop of the
// last version of its ChaosPod written before it, and returns the
// latenesses of those counted: every deletion seen up to windowEnd, and
// every later one whose nextStop was at or before windowEnd (a stop due in
// the window, seen late). due holds their nextStops, in the same order.
// missing is how many stops due in the window (distinct nextStops up to
// windowEnd that a ChaosPod with a started Pod carried) no counted
// deletion matched.
func (o *chaosObservation) stops(windowEnd, cut time.Time) (late []time.Duration, due []time.Time, missing int, err error) {
	type stop struct {
		name string
		at   int64 // nextStop, Unix nanoseconds
	}
	seen := map[stop]bool{}
	o.unmatched = o.unmatched[:0]
	for _, d := range o.deletions {
		if d.seen.After(cut) {
			continue
		}
		current, err := o.current(d)
		if err != nil {
			return nil, nil, 0, err
		}
		if d.seen.After(windowEnd) && current.After(windowEnd) {
			continue // due after the window
		}
		seen[stop{d.name, current.UnixNano()}] = true
		late = append(late, d.seen.Sub(current))
		due = append(due, current)
	}
	for name, versions := range o.history {
		counted := map[int64]bool{}
		for _, v := range versions {
			at := v.nextStop.UnixNano()
			if !v.started || v.nextStop.IsZero() || v.nextStop.After(windowEnd) || counted[at] {
				continue
			}
			counted[at] = true
			if !seen[stop{name, at}] {
				missing++
				if len(o.unmatched) < 5 {
					o.unmatched = append(o.unmatched, o.describe(name, v.nextStop))
				}
			}
		}
	}
	return late, due, missing, nil
}

// current is the nextStop of the last version of d's ChaosPod written
// before d.
func (o *chaosObservation) current(d deletion) (time.Time, error) {
	versions := o.history[d.name]
	// The first version at or after the deletion; the one before it was
	// current when the Pod went.
	i, _ := slices.BinarySearchFunc(versions, d.rv, func(v stopVersion, rv uint64) int {
		return cmp.Compare(v.rv, rv)
	})
	if i == 0 {
		return time.Time{}, fmt.Errorf("pod %s deleted (resourceVersion %d) before its chaospod was seen", d.name, d.rv)
	}
	if at := versions[i-1].nextStop; !at.IsZero() {
		return at, nil
	}
	return time.Time{}, fmt.Errorf("pod %s deleted (resourceVersion %d) while its chaospod had no nextStop", d.name, d.rv)
}

// stopSecond is the stops due in one whole second: how many, and how
// late the latest was seen.
type stopSecond struct {
	at    time.Time
	n     int
	worst time.Duration
}

// stopSeconds groups the stops by the second they were due, latest tail
// first. late and due are what stops returns.
func stopSeconds(late []time.Duration, due []time.Time) []stopSecond {
	bySecond := map[time.Time]*stopSecond{}
	for i, at := range due {
		s := bySecond[at]
		if s == nil {
			s = &stopSecond{at: at}
			bySecond[at] = s
		}
		s.n++
		s.worst = max(s.worst, late[i])
	}
	all := make([]stopSecond, 0, len(bySecond))
	for _, s := range bySecond {
		all = append(all, *s)
	}
	slices.SortFunc(all, func(a, b stopSecond) int { return cmp.Compare(b.worst, a.worst) })
	return all
}

// busiestOf is the second with the most stops due, the one with the later
// tail of two as busy; zero for none.
func busiestOf(seconds []stopSecond) stopSecond {
	var busiest stopSecond
	for _, s := range seconds {
		if s.n > busiest.n || s.n == busiest.n && s.worst > busiest.worst {
			busiest = s
		}
	}
	return busiest
}

// describeSeconds names the k seconds whose stops were latest: how many
// Pods were due in each and the latest of them, which says whether a tail
// is one crowded second or spread out.
func describeSeconds(seconds []stopSecond, k int) string {
	var b strings.Builder
	for i, s := range seconds[:min(k, len(seconds))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d due at %s: latest %s", s.n, s.at.Format(time.TimeOnly), s.worst.Round(time.Millisecond))
	}
	return b.String()
}

// stopBurst is the chaos workload's limit: n Pods created in a namespace
// of their own (through the Pod webhooks, served by a seeding process that
// is gone before the burst), then deleted by the driver all at once at the
// next whole second but one, as n stops due in the same second, each with
// its UID as precondition as the operator deletes. It returns how long
// after that second the Pod watch saw the last deletion. Called with no
// operator running.
func (e *env) stopBurst(ctx context.Context, label string, n int) (_ time.Duration, err error) {
	ns, cleanup, err := e.scratch(ctx, "chaos-limit", label)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	owners, err := e.createReplicaSets(ctx, ns, 1, 1)
	if err != nil {
		return 0, err
	}
	if _, err := e.seedPods(ctx, e.opts.operator, "chaos-limit", ns, owners, n, 16); err != nil {
		return 0, err
	}
	podClient := e.cs.CoreV1().Pods(ns)
	list, err := podClient.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list pods in %s: %w", ns, err)
	}
	w, err := watchFrom(ctx, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return podClient.Watch(ctx, o)
	})
	if err != nil {
		return 0, err
	}
	defer w.Stop()

	due := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	select {
	case <-time.After(time.Until(due)):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	deleted := make(chan error, 1)
	go func() {
		deleted <- parallel(ctx, len(list.Items), len(list.Items), func(ctx context.Context, i int) error {
			pod := list.Items[i]
			if err := podClient.Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}); err != nil {
				return fmt.Errorf("delete pod %s/%s: %w", ns, pod.Name, err)
			}
			return nil
		})
	}()
	var last time.Time
	deadline := time.After(e.opts.timeout)
	for seen := 0; seen < len(list.Items); {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("pod watch in %s ended", ns)
			}
			if ev.Type == watch.Deleted {
				seen++
				last = time.Now()
			}
		case err := <-deleted:
			if err != nil {
				return 0, err
			}
			deleted = nil
		case <-deadline:
			return 0, fmt.Errorf("%d of %d pod deletions in %s not seen within %s", len(list.Items)-seen, len(list.Items), ns, e.opts.timeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return last.Sub(due), nil
}
