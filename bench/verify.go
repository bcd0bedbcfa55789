package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// reasonLabeled is the Event both operators record when they label a
// ReplicaSet.
const reasonLabeled = "Labeled"

// listPage is how many objects one list request asks for: the scale
// workload's namespaces hold tens of thousands, too many for one answer.
const listPage = 5000

// waitLabeledEvents waits until every one of the n ReplicaSets of ns has
// its Labeled Event, and fails naming how many are missing: a figure is
// only reported for an operator that did all of its work, Events included
// (they are written in the background, so they may trail the labels).
func (e *env) waitLabeledEvents(ctx context.Context, ns string, n int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	// Listing thousands of Events loads the API server; poll less often
	// the more there are.
	interval := max(250*time.Millisecond, time.Duration(n/20)*time.Millisecond)
	seen := 0
	for {
		if regarding, err := e.labeledEvents(ctx, ns); err == nil {
			if seen = len(regarding); seen >= n {
				return seen, nil
			}
		}
		select {
		case <-ctx.Done():
			return seen, fmt.Errorf("%d of %d ReplicaSets have their %s Event after %s", seen, n, reasonLabeled, e.opts.timeout)
		case <-time.After(interval):
		}
	}
}

// labeledEvents lists the Events of ns page by page and returns the names
// of the ReplicaSets a Labeled Event regards.
func (e *env) labeledEvents(ctx context.Context, ns string) (map[string]bool, error) {
	regarding := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := e.cs.EventsV1().Events(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for _, ev := range list.Items {
			if ev.Reason == reasonLabeled && ev.Regarding.Kind == "ReplicaSet" {
				regarding[ev.Regarding.Name] = true
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return regarding, nil
		}
	}
}

// replicaSetLabels lists the ReplicaSets of ns page by page and says for
// each whether it carries the label.
func (e *env) replicaSetLabels(ctx context.Context, ns string) (map[string]bool, error) {
	listed, err := e.listReplicaSets(ctx, ns)
	if err != nil {
		return nil, err
	}
	labeled := make(map[string]bool, len(listed))
	for _, rs := range listed {
		labeled[rs.Name] = rs.Labels[labelKey] == labelValue
	}
	return labeled, nil
}

// listReplicaSets lists the ReplicaSets of ns a page at a time.
func (e *env) listReplicaSets(ctx context.Context, ns string) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := e.cs.AppsV1().ReplicaSets(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list replicasets in %s: %w", ns, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}

// cacheObjectsMetric is the gauge the operator and the controller-runtime
// baseline both export: the objects each informer holds, labelled by kind
// ("Pod", "ReplicaSet", "ChaosPod") and selector (empty for an informer of
// every object of the kind).
const cacheObjectsMetric = "operator_cache_objects"

// sample is one series of a metric in a text exposition.
type sample struct {
	labels map[string]string
	value  float64
}

// samplesOf returns every series of the metric name in body, a Prometheus
// text exposition (what /metrics answers a client that asks for no other
// format).
func samplesOf(body []byte, name string) ([]sample, error) {
	var out []sample
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ' && rest[0] != '\t') {
			continue // a comment or another metric (one whose name begins with name too)
		}
		s := sample{labels: map[string]string{}}
		if rest[0] == '{' {
			var err error
			if rest, err = parseLabels(rest[1:], s.labels); err != nil {
				return nil, fmt.Errorf("metric %s: %w in %q", name, err, line)
			}
		}
		fields := strings.Fields(rest) // the value, then maybe a timestamp
		if len(fields) == 0 {
			return nil, fmt.Errorf("metric %s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: value in %q: %w", name, line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, nil
}

// parseLabels reads `name="value",…}` (the opening brace already read)
// into labels and returns what follows the closing brace. Values may
// escape a backslash, a double quote and a newline, as the format does.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " \t,")
		if rest, ok := strings.CutPrefix(s, "}"); ok {
			return rest, nil
		}
		key, rest, ok := strings.Cut(s, "=")
		if !ok {
			return "", errors.New("label without a value")
		}
		key = strings.TrimSpace(key)
		rest = strings.TrimLeft(rest, " \t")
		if key == "" || !strings.HasPrefix(rest, `"`) {
			return "", fmt.Errorf("label %q without a quoted value", key)
		}
		var value strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			c := rest[i]
			if c == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					c = '\n'
				default: // \\ and \"
					c = rest[i]
				}
			}
			value.WriteByte(c)
		}
		if i == len(rest) {
			return "", fmt.Errorf("label %q: unterminated value", key)
		}
		labels[key] = value.String()
		s = rest[i+1:]
	}
}

// kindCache is what one kind's informers hold.
type kindCache struct {
	// objects is the kind's objects cached, counted once: an informer of
	// every object of the kind holds whatever a selecting informer of it
	// holds too, so when there is one it alone counts; otherwise the
	// selecting informers' counts are summed.
	objects int
	// largest is the most any one informer of the kind holds, which can
	// be no more than there are of the kind either.
	largest int
}

// cachedByKind sums operator_cache_objects series per kind (see kindCache).
func cachedByKind(series []sample) (map[string]kindCache, error) {
	all := map[string]int{}      // the informer of every object, per kind
	selected := map[string]int{} // the selecting informers' sum, per kind
	out := map[string]kindCache{}
	for _, s := range series {
		kind := s.labels["kind"]
		if kind == "" {
			return nil, fmt.Errorf("%s series %v has no kind", cacheObjectsMetric, s.labels)
		}
		n := int(s.value)
		if float64(n) != s.value || n < 0 {
			return nil, fmt.Errorf("%s{kind=%q,selector=%q} is %v, not a count", cacheObjectsMetric, kind, s.labels["selector"], s.value)
		}
		if s.labels["selector"] == "" {
			all[kind] += n
		} else {
			selected[kind] += n
		}
		c := out[kind]
		c.largest = max(c.largest, n)
		out[kind] = c
	}
	for kind, c := range out {
		if n, ok := all[kind]; ok {
			c.objects = n
		} else {
			c.objects = selected[kind]
		}
		out[kind] = c
	}
	return out, nil
}

// cacheWant is what a settled binary must cache of one kind: at least the
// created objects the workload made and relies on, and no more than the
// existing ones of the kind in the whole cluster (an informer holding
// more keeps deleted objects or counts some twice).
type cacheWant struct {
	kind              string
	created, existing int
}

// checkCached fails naming the first kind of wants whose cached count is
// out of its bounds, and binary.
func checkCached(binary string, cached map[string]kindCache, wants []cacheWant) error {
	for _, w := range wants {
		c, ok := cached[w.kind]
		switch {
		case !ok:
			return fmt.Errorf("%s caches no %s (no %s series of kind %q): want at least the %d the workload created", binary, w.kind, cacheObjectsMetric, w.kind, w.created)
		case c.objects < w.created:
			return fmt.Errorf("%s caches %d %s objects: want at least the %d the workload created", binary, c.objects, w.kind, w.created)
		case c.objects > w.existing:
			return fmt.Errorf("%s caches %d %s objects: want at most the %d in the cluster", binary, c.objects, w.kind, w.existing)
		case c.largest > w.existing:
			return fmt.Errorf("%s has an informer of %d %s objects: want at most the %d in the cluster", binary, c.largest, w.kind, w.existing)
		}
	}
	return nil
}

// kindResources are the resources of the kinds the workloads check the
// caches of.
var kindResources = map[string]schema.GroupVersionResource{
	"Pod":        corev1.SchemeGroupVersion.WithResource("pods"),
	"ReplicaSet": appsv1.SchemeGroupVersion.WithResource("replicasets"),
	chaosv1.Kind: chaosv1.GroupVersionResource,
}

// verifyCached checks what op, settled, caches of each kind of created
// (the objects of that kind the workload made) against checkCached's
// bounds, listing the kind in every namespace for the upper one, and
// returns the cached count per kind for the figures.
func (e *env) verifyCached(ctx context.Context, op *operator, binary string, created map[string]int) (map[string]int, error) {
	body, err := op.scrape(ctx)
	if err != nil {
		return nil, err
	}
	series, err := samplesOf(body, cacheObjectsMetric)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("%s exports no %s", binary, cacheObjectsMetric)
	}
	cached, err := cachedByKind(series)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	wants := make([]cacheWant, 0, len(created))
	for _, kind := range slices.Sorted(maps.Keys(created)) {
		resource, ok := kindResources[kind]
		if !ok {
			return nil, fmt.Errorf("no resource known for kind %s", kind)
		}
		existing, err := e.countAll(ctx, resource)
		if err != nil {
			return nil, err
		}
		wants = append(wants, cacheWant{kind: kind, created: created[kind], existing: existing})
	}
	if err := checkCached(binary, cached, wants); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(created))
	for kind := range created {
		out[kind] = cached[kind].objects
	}
	return out, nil
}

// countAll counts the objects of resource in every namespace, metadata
// only and a page at a time.
func (e *env) countAll(ctx context.Context, resource schema.GroupVersionResource) (int, error) {
	n := 0
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := e.meta.Resource(resource).List(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("list %s: %w", resource.Resource, err)
		}
		n += len(list.Items)
		if opts.Continue = list.Continue; opts.Continue == "" {
			return n, nil
		}
	}
}
