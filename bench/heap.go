package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// heapFetchTimeout bounds one heap profile fetch: gc=1 runs a full garbage
// collection first, which takes a while on a large heap and a busy machine.
const heapFetchTimeout = time.Minute

// heapProfile fetches the heap profile of the process serving Go's runtime
// profiles at addr (host:port, --pprof-bind-address of both the operator
// and crbaseline), after a garbage collection (gc=1), so in-use bytes are
// what the process keeps rather than garbage not yet collected.
func heapProfile(ctx context.Context, addr string) (*profile.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, heapFetchTimeout)
	defer cancel()
	url := "http://" + addr + "/debug/pprof/heap?gc=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch heap profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("fetch heap profile from %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	p, err := profile.Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse heap profile from %s: %w", url, err)
	}
	return p, nil
}

// heapFigures fetches the heap profile at addr, logs the libraries holding
// most of it and the functions holding most of its cache part under who's
// name, and returns its in-use bytes split into heap-cache, heap-queue,
// heap-events and heap-other (see heapSplit).
func heapFigures(ctx context.Context, addr, who string) ([]figure, error) {
	p, err := heapProfile(ctx, addr)
	if err != nil {
		return nil, err
	}
	byLib, err := heapByLibrary(p)
	if err != nil {
		return nil, err
	}
	byFn, err := heapCacheByFunction(p)
	if err != nil {
		return nil, err
	}
	logf("%s: heap in use by library: %s", who, topShares(byLib, 8))
	logf("%s: heap cache part by function: %s", who, topShares(byFn, 8))
	return heapFiguresOf(p)
}

// heapFiguresOf is heapSplit of p as figures, in mebibytes.
func heapFiguresOf(p *profile.Profile) ([]figure, error) {
	s, err := heapSplit(p)
	if err != nil {
		return nil, err
	}
	return []figure{
		bytesOf("heap-cache", s.cache),
		bytesOf("heap-queue", s.queue),
		bytesOf("heap-events", s.events),
		bytesOf("heap-other", s.other),
	}, nil
}

// heapParts is the in-use bytes of a heap profile by what allocated them.
type heapParts struct{ cache, queue, events, other int64 }

func (s heapParts) total() int64 { return s.cache + s.queue + s.events + s.other }

// frameSet names the frames that attribute an allocation to a part of the
// split.
type frameSet struct {
	// packages match a function of the package or of one below it.
	packages []string
	// types match the methods of a type and their closures, written as
	// the function names spell them: "k8s.io/apimachinery/pkg/watch.(*StreamWatcher)".
	types []string
}

// The frames of Event recording, of the work queues and of the object
// cache. The operator's
// own packages appear beside client-go's and controller-runtime's so that
// the operator and crbaseline split alike.
var (
	eventFrames = frameSet{
		packages: []string{
			"k8s.io/client-go/tools/events",
			"k8s.io/client-go/tools/record",
			"sigs.k8s.io/controller-runtime/pkg/recorder",
			"sigs.k8s.io/controller-runtime/pkg/internal/recorder",
			"github.com/hexagonal-operator/operator/internal/adapters/events",
		},
		// Both recorders queue their Events in a watch.Broadcaster whose
		// goroutine has no recorder frame; nothing else in client-go or
		// controller-runtime starts one.
		types: []string{
			"k8s.io/apimachinery/pkg/watch.(*Broadcaster)",
			"k8s.io/apimachinery/pkg/watch.(*broadcasterWatcher)",
		},
	}
	// client-go's queue is filled from the informers' handlers, its
	// allocations under their frames; controller-runtime's priority queue
	// fills its maps on a goroutine of its own. Either way they are the
	// queue's, whatever goroutine ran them.
	queueFrames = frameSet{
		packages: []string{
			"k8s.io/client-go/util/workqueue",
			"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue",
		},
	}
	cacheFrames = frameSet{
		packages: []string{
			"k8s.io/client-go/tools/cache",
			"sigs.k8s.io/controller-runtime/pkg/cache",
			"github.com/hexagonal-operator/operator/internal/adapters/cache",
			// The decoder of a watch stream's events.
			"k8s.io/client-go/rest/watch",
		},
		// A watch's objects are decoded on the stream's own goroutine, with
		// no reflector frame on its stack, and the store keeps them: every
		// object changed since the initial list (and all of them with a
		// streaming list) is allocated here. In these processes every REST
		// watch is an informer's.
		types: []string{"k8s.io/apimachinery/pkg/watch.(*StreamWatcher)"},
	}
)

// match tells whether the function called name is one of fs's frames.
func (fs frameSet) match(name string) bool {
	pkg := funcPackage(name)
	for _, prefix := range fs.packages {
		if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
			return true
		}
	}
	for _, t := range fs.types {
		if strings.HasPrefix(name, t+".") {
			return true
		}
	}
	return false
}

// heapSplit sums p's in-use bytes by the part of the split (partOf) that
// allocated them.
func heapSplit(p *profile.Profile) (heapParts, error) {
	idx, err := inuseSpace(p)
	if err != nil {
		return heapParts{}, err
	}
	var s heapParts
	for _, sample := range p.Sample {
		v := sample.Value[idx]
		switch partOf(sample) {
		case partEvents:
			s.events += v
		case partQueue:
			s.queue += v
		case partCache:
			s.cache += v
		default:
			s.other += v
		}
	}
	return s, nil
}

// heapPart is a part of the heap's split.
type heapPart int

const (
	partOther heapPart = iota
	partCache
	partQueue
	partEvents
)

// partOf attributes a sample to the object cache, to the work queues, to
// Event recording or to none of them, by the stack that allocated it:
// events if any frame is in an Event recorder, else queue if any frame is
// in a work queue (what it keeps of the largest burst it held: Go maps
// never shrink), else cache if any frame is in the cache's machinery
// (reflector, DeltaFIFO, stores, informers, the watch streams that feed
// them), else other.
//
// The allocating stack is the right owner because a heap profile's in-use
// bytes are the live objects charged to where they were allocated: a
// cached object is decoded under the reflector's list or watch and then
// kept by the store, and an Event and what the recorder keeps of it (its
// series, the broadcaster's queue) are built under the recorder. The leaf
// frames (decoders, maps, mallocgc) are shared by everything, so any frame
// of the stack counts, not only the innermost. Events win when both
// appear: such a stack is a recorder called from an informer's handler,
// and what it allocates is the Event; the cache's own work never passes
// through a recorder.
func partOf(s *profile.Sample) heapPart {
	switch {
	case anyFrameIn(s, eventFrames):
		return partEvents
	case anyFrameIn(s, queueFrames):
		return partQueue
	case anyFrameIn(s, cacheFrames):
		return partCache
	default:
		return partOther
	}
}

// heapByLibrary sums p's in-use bytes by the module of the innermost frame
// outside the standard library and the runtime: which library asked for
// the memory, whatever runtime or encoding function did the allocating.
// Stacks wholly in the standard library count as "std", those of a program's
// main package as "main".
func heapByLibrary(p *profile.Profile) (map[string]int64, error) {
	return heapBy(p, nil, func(_, pkg string) string {
		if pkg == "main" {
			return "main"
		}
		return modulePath(pkg)
	})
}

// heapCacheByFunction sums the in-use bytes of heapSplit's cache part by
// the innermost function outside the standard library and the runtime:
// which step of the informers' machinery, or of the handlers it calls,
// keeps them. Type arguments are written [...].
func heapCacheByFunction(p *profile.Profile) (map[string]int64, error) {
	inCache := func(s *profile.Sample) bool { return partOf(s) == partCache }
	return heapBy(p, inCache, func(fn, _ string) string { return withoutTypeArgs(fn) })
}

// heapBy sums the in-use bytes of p's samples that keep accepts (all when
// keep is nil) by key of their innermost frame outside the standard
// library and the runtime, the main package's included; stacks with no
// such frame count as "std".
func heapBy(p *profile.Profile, keep func(*profile.Sample) bool, key func(fn, pkg string) string) (map[string]int64, error) {
	idx, err := inuseSpace(p)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, sample := range p.Sample {
		if keep != nil && !keep(sample) {
			continue
		}
		k := "std"
		if fn, pkg, ok := innermostOutsideStd(sample); ok {
			k = key(fn, pkg)
		}
		out[k] += sample.Value[idx]
	}
	return out, nil
}

// innermostOutsideStd is the innermost frame of s outside the standard
// library and the runtime, and its package.
func innermostOutsideStd(s *profile.Sample) (fn, pkg string, ok bool) {
	for _, loc := range s.Location {
		// A location's lines run from the innermost inlined call out.
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			pkg := funcPackage(line.Function.Name)
			if pkg == "main" || !isStd(pkg) {
				return line.Function.Name, pkg, true
			}
		}
	}
	return "", "", false
}

// withoutTypeArgs writes a generic function's type arguments as [...]:
// "k8s.io/client-go/util/workqueue.(*Typed[go.shape.struct { ... }]).Add"
// becomes "k8s.io/client-go/util/workqueue.(*Typed[...]).Add".
func withoutTypeArgs(fn string) string {
	var b strings.Builder
	depth := 0
	for _, r := range fn {
		switch {
		case r == '[':
			if depth == 0 {
				b.WriteString("[...]")
			}
			depth++
		case r == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// topShares prints the n keys holding most of byKey (libraries,
// functions), largest first, with their share of the total, and the rest
// as one.
func topShares(byKey map[string]int64, n int) string {
	type share struct {
		name  string
		bytes int64
	}
	var shares []share
	var total int64
	for name, b := range byKey {
		shares = append(shares, share{name, b})
		total += b
	}
	slices.SortFunc(shares, func(a, b share) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name)) })
	percent := func(b int64) string {
		if total == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(b)/float64(total))
	}
	var parts []string
	var rest int64
	for i, s := range shares {
		if i >= n {
			rest += s.bytes
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", s.name, bytesOf("", s.bytes).formatValue(), percent(s.bytes)))
	}
	if len(shares) > n {
		parts = append(parts, fmt.Sprintf("%d others %s (%s)", len(shares)-n, bytesOf("", rest).formatValue(), percent(rest)))
	}
	return fmt.Sprintf("%s of %s", strings.Join(parts, ", "), bytesOf("", total).formatValue())
}

// inuseSpace is the index of p's inuse_space values.
func inuseSpace(p *profile.Profile) (int, error) {
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			return i, nil
		}
	}
	return 0, errors.New("the profile has no inuse_space values: not a heap profile")
}

// anyFrameIn tells whether a frame of s is one of fs's.
func anyFrameIn(s *profile.Sample, fs frameSet) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil && fs.match(line.Function.Name) {
				return true
			}
		}
	}
	return false
}

// funcPackage is the import path of a Go symbol such as
// "k8s.io/client-go/tools/cache.(*Reflector).watch": up to the first dot
// after the last slash. The linker writes a dot in the last path element
// as %2e (gopkg.in/yaml%2ev3.Unmarshal), so that dot is the package's end;
// type arguments, which may hold slashes and dots, are cut first.
func funcPackage(name string) string {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return strings.ReplaceAll(name, "%2e", ".")
}

// isStd tells whether pkg is in the standard library or the runtime, whose
// import paths have no dot in their first element (runtime,
// encoding/json, vendor/golang.org/x/net/http2/hpack, internal/sync).
func isStd(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// modulePath guesses the module of pkg by its host's conventions, since a
// profile holds no module information: three elements on hosts of
// owner/repo (github.com/prometheus/client_golang, golang.org/x/net), two
// elsewhere (k8s.io/client-go, go.uber.org/zap), and a major version
// suffix after them (k8s.io/klog/v2). Modules nested in a repository
// (go.opentelemetry.io/otel/sdk) count as the repository's.
func modulePath(pkg string) string {
	elems := strings.Split(pkg, "/")
	n := 2
	switch elems[0] {
	case "github.com", "gitlab.com", "bitbucket.org", "golang.org":
		n = 3
	case "gopkg.in":
		// gopkg.in/yaml.v3, or gopkg.in/evanphx/json-patch.v4 with an owner.
		if len(elems) > 1 && !strings.Contains(elems[1], ".v") {
			n = 3
		}
	}
	n = min(n, len(elems))
	if n < len(elems) && isMajorVersion(elems[n]) {
		n++
	}
	return strings.Join(elems[:n], "/")
}

// isMajorVersion tells whether elem is a module path's major version
// suffix, v2 or above.
func isMajorVersion(elem string) bool {
	if len(elem) < 2 || elem[0] != 'v' || elem[1] == '0' {
		return false
	}
	for _, c := range elem[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return elem != "v1"
}
