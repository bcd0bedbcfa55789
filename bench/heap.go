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
// most of it, and returns its in-use bytes split into heap-cache,
// heap-events and heap-other (see heapSplit).
func heapFigures(ctx context.Context, addr string) ([]figure, error) {
	p, err := heapProfile(ctx, addr)
	if err != nil {
		return nil, err
	}
	byLib, err := heapByLibrary(p)
	if err != nil {
		return nil, err
	}
	logf("heap in use by library: %s", topLibraries(byLib, 8))
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
		bytesOf("heap-events", s.events),
		bytesOf("heap-other", s.other),
	}, nil
}

// heapParts is the in-use bytes of a heap profile by what allocated them.
type heapParts struct{ cache, events, other int64 }

func (s heapParts) total() int64 { return s.cache + s.events + s.other }

// The packages whose frames attribute an allocation to the object cache or
// to Event recording, a prefix matching the package and those below it.
// The operator's own appear beside client-go's and controller-runtime's so
// that the operator and crbaseline split alike.
var (
	eventPackages = []string{
		"k8s.io/client-go/tools/events",
		"k8s.io/client-go/tools/record",
		"sigs.k8s.io/controller-runtime/pkg/recorder",
		"sigs.k8s.io/controller-runtime/pkg/internal/recorder",
		"github.com/hexagonal-operator/operator/internal/adapters/events",
	}
	cachePackages = []string{
		"k8s.io/client-go/tools/cache",
		"sigs.k8s.io/controller-runtime/pkg/cache",
		"github.com/hexagonal-operator/operator/internal/adapters/cache",
	}
)

// heapSplit attributes p's in-use bytes to the object cache, to Event
// recording or to neither, by the stack that allocated them: events if any
// frame is in an Event recorder, else cache if any frame is in the cache's
// machinery (reflector, DeltaFIFO, stores, informers), else other.
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
func heapSplit(p *profile.Profile) (heapParts, error) {
	idx, err := inuseSpace(p)
	if err != nil {
		return heapParts{}, err
	}
	var s heapParts
	for _, sample := range p.Sample {
		v := sample.Value[idx]
		switch {
		case anyFrameIn(sample, eventPackages):
			s.events += v
		case anyFrameIn(sample, cachePackages):
			s.cache += v
		default:
			s.other += v
		}
	}
	return s, nil
}

// heapByLibrary sums p's in-use bytes by the module of the innermost frame
// outside the standard library and the runtime: which library asked for
// the memory, whatever runtime or encoding function did the allocating.
// Stacks wholly in the standard library count as "std", those of a program's
// main package as "main".
func heapByLibrary(p *profile.Profile) (map[string]int64, error) {
	idx, err := inuseSpace(p)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, sample := range p.Sample {
		lib := "std"
	frames:
		for _, loc := range sample.Location {
			// A location's lines run from the innermost inlined call out.
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				pkg := funcPackage(line.Function.Name)
				if pkg == "main" {
					lib = "main"
					break frames
				}
				if !isStd(pkg) {
					lib = modulePath(pkg)
					break frames
				}
			}
		}
		out[lib] += sample.Value[idx]
	}
	return out, nil
}

// topLibraries prints the n libraries holding most of byLib, largest first,
// with their share of the total, and the rest as one.
func topLibraries(byLib map[string]int64, n int) string {
	type lib struct {
		name  string
		bytes int64
	}
	var libs []lib
	var total int64
	for name, b := range byLib {
		libs = append(libs, lib{name, b})
		total += b
	}
	slices.SortFunc(libs, func(a, b lib) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name)) })
	share := func(b int64) string {
		if total == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(b)/float64(total))
	}
	var parts []string
	var rest int64
	for i, l := range libs {
		if i >= n {
			rest += l.bytes
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", l.name, bytesOf("", l.bytes).formatValue(), share(l.bytes)))
	}
	if len(libs) > n {
		parts = append(parts, fmt.Sprintf("%d others %s (%s)", len(libs)-n, bytesOf("", rest).formatValue(), share(rest)))
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

// anyFrameIn tells whether a frame of s is in one of packages or below it.
func anyFrameIn(s *profile.Sample, packages []string) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			pkg := funcPackage(line.Function.Name)
			for _, prefix := range packages {
				if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
					return true
				}
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
