package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"reflect"
	"runtime"
	runtimepprof "runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	opcache "github.com/hexagonal-operator/operator/internal/adapters/cache"
	opevents "github.com/hexagonal-operator/operator/internal/adapters/events"
)

// stackSample is one sample of a synthetic heap profile: its in-use bytes
// and its stack, innermost frame first. A frame "a;b" is one location
// whose lines are a inlined into b.
type stackSample struct {
	bytes int64
	stack []string
}

// syntheticHeap builds a heap profile as the runtime writes one: four
// values per sample, inuse_space last. The other values are set apart from
// it so that reading the wrong one shows.
func syntheticHeap(samples ...stackSample) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"},
			{Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
		},
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if name == "" {
			return nil // a line without a symbol
		}
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, s := range samples {
		var locs []*profile.Location
		for _, frame := range s.stack {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1)}
			for _, name := range strings.Split(frame, ";") {
				loc.Line = append(loc.Line, profile.Line{Function: fn(name)})
			}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{7, 1 << 40, 3, s.bytes}})
	}
	return p
}

func TestHeapSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stack []string
		want  string // cache, queue, events or other
	}{
		{"an object decoded under the reflector's watch", []string{
			"runtime.mallocgc",
			"encoding/json.(*decodeState).object",
			"k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Decode",
			"k8s.io/client-go/tools/cache.(*Reflector).watch",
			"k8s.io/client-go/tools/cache.(*Reflector).ListAndWatch",
		}, "cache"},
		{"a DeltaFIFO entry", []string{"k8s.io/client-go/tools/cache.(*DeltaFIFO).queueActionLocked"}, "cache"},
		{"an object decoded from a watch stream, on its own goroutine", []string{
			"reflect.unsafe_New",
			"k8s.io/apimachinery/pkg/runtime.(*Scheme).New",
			"k8s.io/apimachinery/pkg/runtime/serializer/protobuf.(*Serializer).Decode",
			"k8s.io/apimachinery/pkg/runtime.Decode",
			"k8s.io/client-go/rest/watch.(*Decoder).Decode",
			"k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive",
		}, "cache"},
		{"a watch stream's closure", []string{"k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive.func1"}, "cache"},
		{"the Event broadcaster's goroutine", []string{
			"k8s.io/apimachinery/pkg/watch.(*Broadcaster).Watch.func1",
			"k8s.io/apimachinery/pkg/watch.(*Broadcaster).blockQueue.func1",
			"k8s.io/apimachinery/pkg/watch.(*Broadcaster).loop",
		}, "events"},
		{"another function of the watch package", []string{"k8s.io/apimachinery/pkg/watch.NewFake"}, "other"},
		{"a type whose name only starts like the stream's", []string{"k8s.io/apimachinery/pkg/watch.(*StreamWatcherLike).Stop"}, "other"},
		{"controller-runtime's cache, a package below it", []string{
			"runtime.makemap",
			"sigs.k8s.io/controller-runtime/pkg/cache/internal.(*Informers).addInformerToMap",
		}, "cache"},
		{"the operator's cache adapter", []string{
			"runtime.newobject",
			"github.com/hexagonal-operator/operator/internal/adapters/cache.(*Resource[...]).start",
		}, "cache"},
		{"an Event under client-go's tools/events", []string{
			"runtime.mallocgc",
			"k8s.io/client-go/tools/events.(*recorderImpl).makeEvent",
			"k8s.io/client-go/tools/events.(*recorderImpl).Eventf",
		}, "events"},
		{"an Event under tools/record", []string{"k8s.io/client-go/tools/record.(*recorder).makeEvent"}, "events"},
		{"controller-runtime's recorder provider", []string{"sigs.k8s.io/controller-runtime/pkg/internal/recorder.(*Provider).getBroadcaster"}, "events"},
		{"controller-runtime's recorder package", []string{"sigs.k8s.io/controller-runtime/pkg/recorder.init"}, "events"},
		{"the operator's Event adapter", []string{
			"runtime.makechan",
			"github.com/hexagonal-operator/operator/internal/adapters/events.(*Recorder).Start",
		}, "events"},
		{"a recorder inlined into a cache handler is an Event", []string{
			"runtime.mallocgc;k8s.io/client-go/tools/events.(*recorderImpl).Eventf",
			"k8s.io/client-go/tools/cache.ResourceEventHandlerFuncs.OnAdd",
			"k8s.io/client-go/tools/cache.(*processorListener).run",
		}, "events"},
		{"an inlined cache frame counts", []string{"runtime.mallocgc;k8s.io/client-go/tools/cache.(*threadSafeMap).Add"}, "cache"},
		{"a package whose name only starts like the cache's", []string{"k8s.io/client-go/tools/cachelike.New"}, "other"},
		{"client-go's work queue filled from an informer's handler", []string{
			"internal/runtime/maps.(*table).grow",
			"k8s.io/client-go/util/workqueue.(*defaultQueueMetrics[...]).add",
			"k8s.io/client-go/util/workqueue.(*Typed[...]).Add",
			"github.com/hexagonal-operator/operator/internal/adapters/controller.(*eventHandler).OnAdd",
			"k8s.io/client-go/tools/cache.(*processorListener).run",
		}, "queue"},
		{"controller-runtime's priority queue on its own goroutine", []string{
			"runtime.mapassign",
			"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).lockedAddWithOpts",
			"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue[...]).handleAddBuffer",
		}, "queue"},
		{"a package whose name only starts like the work queue's", []string{"k8s.io/client-go/util/workqueuelike.New"}, "other"},
		{"zap", []string{"runtime.mallocgc", "go.uber.org/zap/zapcore.(*ioCore).With"}, "other"},
		{"a frame without a symbol", []string{""}, "other"},
		{"the runtime alone", []string{"runtime.malg", "runtime.newproc1"}, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := heapSplit(syntheticHeap(stackSample{100, tt.stack}))
			require.NoError(t, err)
			want := map[string]int64{"cache": 0, "queue": 0, "events": 0, "other": 0}
			want[tt.want] = 100
			assert.Equal(t, want, map[string]int64{"cache": got.cache, "queue": got.queue, "events": got.events, "other": got.other})
			byFn, err := heapCacheByFunction(syntheticHeap(stackSample{100, tt.stack}))
			require.NoError(t, err)
			assert.Equal(t, got.cache, sumOf(byFn), "the function lines cover the cache part, no more")
		})
	}

	t.Run("sums over samples", func(t *testing.T) {
		t.Parallel()
		got, err := heapSplit(syntheticHeap(
			stackSample{1000, []string{"runtime.mallocgc", "k8s.io/client-go/tools/cache.(*Reflector).list"}},
			stackSample{2000, []string{"k8s.io/client-go/tools/cache.(*threadSafeMap).Update"}},
			stackSample{30, []string{"k8s.io/client-go/tools/events.(*recorderImpl).Eventf"}},
			stackSample{70, []string{"k8s.io/client-go/util/workqueue.(*Typed[...]).Add", "k8s.io/client-go/tools/cache.(*processorListener).run"}},
			stackSample{400, []string{"go.uber.org/zap.New"}},
			stackSample{5, []string{"runtime.malg"}},
		))
		require.NoError(t, err)
		assert.Equal(t, heapParts{cache: 3000, queue: 70, events: 30, other: 405}, got)
		assert.EqualValues(t, 3505, got.total())

		figures, err := heapFiguresOf(syntheticHeap(stackSample{3 << 20, []string{"k8s.io/client-go/tools/cache.New"}}))
		require.NoError(t, err)
		assert.Equal(t, "heap-cache=3.0MiB  heap-queue=0.0MiB  heap-events=0.0MiB  heap-other=0.0MiB", result(figures).String())
	})

	t.Run("not a heap profile", func(t *testing.T) {
		t.Parallel()
		p := syntheticHeap()
		p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		_, err := heapSplit(p)
		require.ErrorContains(t, err, "inuse_space")
		_, err = heapByLibrary(p)
		require.ErrorContains(t, err, "inuse_space")
		_, err = heapCacheByFunction(p)
		require.ErrorContains(t, err, "inuse_space")
	})
}

// The operator's packages in the split are named by hand; a moved package
// must move them too.
func TestHeapSplitNamesTheOperatorsPackages(t *testing.T) {
	t.Parallel()
	assert.Contains(t, eventFrames.packages, reflect.TypeFor[opevents.Recorder]().PkgPath())
	assert.Contains(t, cacheFrames.packages, reflect.TypeFor[opcache.Cache]().PkgPath())
}

func TestHeapByLibrary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stack []string
		want  string
	}{
		{"the innermost frame outside std", []string{
			"runtime.mallocgc",
			"encoding/json.(*decodeState).object",
			"k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Decode",
			"k8s.io/client-go/tools/cache.(*Reflector).watch",
		}, "k8s.io/apimachinery"},
		{"client-go", []string{"runtime.makemap", "k8s.io/client-go/tools/cache.(*threadSafeMap).Add"}, "k8s.io/client-go"},
		{"controller-runtime, type arguments with slashes", []string{
			"sigs.k8s.io/controller-runtime/pkg/internal/source.(*Kind[go.shape.*k8s.io/api/core/v1.Pod]).Start",
		}, "sigs.k8s.io/controller-runtime"},
		{"zap", []string{"go.uber.org/zap/zapcore.newCounters"}, "go.uber.org/zap"},
		{"a github.com module", []string{"runtime.mallocgc", "github.com/prometheus/client_golang/prometheus.NewCounterVec"}, "github.com/prometheus/client_golang"},
		{"the operator's own module", []string{"github.com/hexagonal-operator/operator/internal/adapters/cache.(*Cache).Start"}, "github.com/hexagonal-operator/operator"},
		{"a major version suffix", []string{"k8s.io/klog/v2.(*loggingT).output"}, "k8s.io/klog/v2"},
		{"a major version suffix below a package", []string{"sigs.k8s.io/structured-merge-diff/v6/schema.(*Schema).FindNamedType"}, "sigs.k8s.io/structured-merge-diff/v6"},
		{"golang.org/x", []string{"golang.org/x/net/http2.(*Framer).ReadFrame"}, "golang.org/x/net"},
		{"gopkg.in with an escaped dot", []string{"gopkg.in/yaml%2ev3.(*parser).node"}, "gopkg.in/yaml.v3"},
		{"gopkg.in with an owner", []string{"gopkg.in/evanphx/json-patch%2ev4.(*partialDoc).set"}, "gopkg.in/evanphx/json-patch.v4"},
		{"an inlined library frame is the innermost", []string{"runtime.mallocgc;google.golang.org/protobuf/proto.Unmarshal;net/http.(*conn).serve"}, "google.golang.org/protobuf"},
		{"std's vendored packages are std", []string{"vendor/golang.org/x/net/http2/hpack.newStaticTable", "net/http.init"}, "std"},
		{"the runtime alone", []string{"runtime.malg", "runtime.newproc1"}, "std"},
		{"compiler-made functions are std", []string{"type:.eq.[2]interface {}"}, "std"},
		{"a program's main package", []string{"runtime.mallocgc", "main.main", "runtime.main"}, "main"},
		{"no stack", nil, "std"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := heapByLibrary(syntheticHeap(stackSample{64, tt.stack}))
			require.NoError(t, err)
			assert.Equal(t, map[string]int64{tt.want: 64}, got)
		})
	}

	t.Run("sums per library", func(t *testing.T) {
		t.Parallel()
		got, err := heapByLibrary(syntheticHeap(
			stackSample{1000, []string{"runtime.mallocgc", "k8s.io/apimachinery/pkg/runtime.Decode", "k8s.io/client-go/tools/cache.(*Reflector).list"}},
			stackSample{300, []string{"k8s.io/apimachinery/pkg/util/sets.New"}},
			stackSample{20, []string{"k8s.io/client-go/tools/cache.New"}},
			stackSample{4, []string{"runtime.malg"}},
			stackSample{6, []string{"runtime.malg"}},
		))
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"k8s.io/apimachinery": 1300, "k8s.io/client-go": 20, "std": 10}, got)
	})
}

func TestHeapCacheByFunction(t *testing.T) {
	t.Parallel()
	got, err := heapCacheByFunction(syntheticHeap(
		// The cache part, by its innermost function outside std.
		stackSample{1000, []string{"runtime.mallocgc", "encoding/json.(*decodeState).object", "k8s.io/apimachinery/pkg/runtime.Decode", "k8s.io/client-go/tools/cache.(*Reflector).list"}},
		stackSample{500, []string{"runtime.growslice", "k8s.io/client-go/tools/cache.(*threadSafeMap).Add"}},
		stackSample{300, []string{
			"k8s.io/utils/buffer.(*TypedRingGrowing[go.shape.interface {}]).WriteOne",
			"k8s.io/client-go/tools/cache.(*processorListener).add",
		}},
		stackSample{200, []string{
			"k8s.io/utils/buffer.(*TypedRingGrowing[go.shape.struct { Keys map[string][]int }]).WriteOne",
			"k8s.io/client-go/tools/cache.(*processorListener).add",
		}},
		stackSample{7, []string{"runtime.malg", "k8s.io/client-go/tools/cache.(*sharedIndexInformer).Run"}},
		// Not the cache part: the work queue's (filled from a handler),
		// Events, and none of them.
		stackSample{90, []string{"k8s.io/client-go/util/workqueue.(*Typed[...]).Add", "k8s.io/client-go/tools/cache.(*processorListener).run"}},
		stackSample{40, []string{"k8s.io/apimachinery/pkg/watch.(*Broadcaster).Action", "k8s.io/client-go/tools/cache.(*processorListener).run"}},
		stackSample{60, []string{"go.uber.org/zap.New"}},
	))
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{
		"k8s.io/apimachinery/pkg/runtime.Decode":                  1000,
		"k8s.io/client-go/tools/cache.(*threadSafeMap).Add":       500,
		"k8s.io/utils/buffer.(*TypedRingGrowing[...]).WriteOne":   500,
		"k8s.io/client-go/tools/cache.(*sharedIndexInformer).Run": 7,
	}, got)
}

func TestWithoutTypeArgs(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"k8s.io/client-go/tools/cache.(*Reflector).list", "k8s.io/client-go/tools/cache.(*Reflector).list"},
		{"pkg.F[go.shape.int]", "pkg.F[...]"},
		{"pkg.(*T[go.shape.struct { A [2]int; B map[string][]byte }]).M", "pkg.(*T[...]).M"},
		{"pkg.(*T[a,b]).M.func1", "pkg.(*T[...]).M.func1"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, withoutTypeArgs(tt.in), tt.in)
	}
}

func TestTopShares(t *testing.T) {
	t.Parallel()
	byLib := map[string]int64{"k8s.io/client-go": 6 << 20, "std": 3 << 20, "go.uber.org/zap": 1 << 20, "a": 0}
	assert.Equal(t, "k8s.io/client-go 6.0MiB (60%), std 3.0MiB (30%), 2 others 1.0MiB (10%) of 10.0MiB", topShares(byLib, 2))
	assert.Equal(t, "k8s.io/client-go 6.0MiB (60%), std 3.0MiB (30%), go.uber.org/zap 1.0MiB (10%), a 0.0MiB (0%) of 10.0MiB", topShares(byLib, 10))
	assert.Equal(t, " of 0.0MiB", topShares(nil, 3))
}

// retained keeps an allocation of the test alive across the collection
// before the profile is written.
var retained []byte

// A real heap profile, the test process's own: every in-use byte lands in
// exactly one part of the split and one library.
func TestHeapOfThisProcess(t *testing.T) {
	retained = make([]byte, 16<<20)
	runtime.GC() // the profile's in-use figures are as of the last collection
	var buf bytes.Buffer
	require.NoError(t, runtimepprof.Lookup("heap").WriteTo(&buf, 0))
	p, err := profile.Parse(&buf)
	require.NoError(t, err)
	idx, err := inuseSpace(p)
	require.NoError(t, err)
	var total int64
	for _, s := range p.Sample {
		total += s.Value[idx]
	}
	require.GreaterOrEqual(t, total, int64(16<<20), "the retained allocation is in use")

	split, err := heapSplit(p)
	require.NoError(t, err)
	assert.Equal(t, total, split.total())
	byLib, err := heapByLibrary(p)
	require.NoError(t, err)
	assert.Equal(t, total, sumOf(byLib))
	byFn, err := heapCacheByFunction(p)
	require.NoError(t, err)
	assert.Equal(t, split.cache, sumOf(byFn), "the function lines cover the cache part, no more")
	// The test allocated it itself, under the module's own package.
	assert.GreaterOrEqual(t, byLib["github.com/hexagonal-operator/operator"]+byLib["main"], int64(16<<20), "%v", byLib)
	t.Log(topShares(byLib, 5))
	retained = nil
}

// heapFigures fetches with gc=1 from the address's /debug/pprof/heap, as
// both binaries serve it.
func TestHeapFigures(t *testing.T) {
	t.Parallel()
	var query string
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/heap", func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		pprof.Handler("heap").ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	figures, err := heapFigures(context.Background(), addr, "test")
	require.NoError(t, err)
	assert.Equal(t, "gc=1", query)
	var names []string
	var sum float64
	for _, f := range figures {
		names = append(names, f.name)
		assert.Equal(t, mebibytes, f.unit)
		sum += f.value
	}
	assert.Equal(t, []string{"heap-cache", "heap-queue", "heap-events", "heap-other"}, names)
	assert.Positive(t, sum)

	_, err = heapProfile(context.Background(), addr+"/nothing")
	require.ErrorContains(t, err, "404")
}

// sumOf is the bytes of a split by key, summed.
func sumOf(byKey map[string]int64) int64 {
	var sum int64
	for _, b := range byKey {
		sum += b
	}
	return sum
}
