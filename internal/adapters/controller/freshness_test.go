package controller_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/internal/writes"
)

// laggingChildren is an API server and a cache of "Child" objects in one:
// creates go to the server at once, the cache applies them only when the
// test says so, as a watch that has not delivered yet.
type laggingChildren struct {
	mu      sync.Mutex
	version uint64
	server  []string // child names, in creation order
	cached  int      // how many of server the cache has applied
	cacheRV uint64
}

var _ controller.Source = (*laggingChildren)(nil)

var childKind = schema.GroupKind{Group: "example.io", Kind: "Child"}

func (c *laggingChildren) GroupKind() schema.GroupKind                           { return childKind }
func (c *laggingChildren) AddEventHandler(toolscache.ResourceEventHandler) error { return nil }
func (c *laggingChildren) WaitForSync(context.Context) error                     { return nil }

func (c *laggingChildren) HasApplied(rv string) bool {
	want, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cacheRV >= want
}

// create is the writer: it reports the write as a real adapter does.
func (c *laggingChildren) create(ctx context.Context, parent string) {
	c.mu.Lock()
	c.version++
	c.server = append(c.server, fmt.Sprintf("%s-%d", parent, len(c.server)))
	rv := strconv.FormatUint(c.version, 10)
	c.mu.Unlock()
	writes.Observe(ctx, childKind, rv)
}

// listCached is the cache read.
func (c *laggingChildren) listCached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cached
}

func (c *laggingChildren) catchUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cached, c.cacheRV = len(c.server), c.version
}

func (c *laggingChildren) onServer() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.server)
}

// TestReadYourOwnWrites runs a reconciler that creates a child when its
// cache shows none (as a ReplicaSet controller creates a Pod). Its parent is
// queued again right after the first create, before the cache has seen it:
// acting on that stale cache creates a duplicate; waiting for the write's
// resourceVersion does not.
func TestReadYourOwnWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         controller.Options
		wantChildren int
		wantWaits    float64
	}{
		{name: "waits for its own write", wantChildren: 1, wantWaits: 1},
		{name: "disabled, a stale read duplicates", opts: controller.Options{DisableReadYourWrites: true}, wantChildren: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			parents, children := newSource("Parent"), &laggingChildren{}
			calls := make(chan int, 10)
			r := newRecorder(func(ctx context.Context, _ ports.Request, n int) (ports.Result, error) {
				if children.listCached() == 0 {
					children.create(ctx, "p")
				}
				calls <- n
				return ports.Result{}, nil
			})
			c, err := newController("ryow", withOptions(e.deps, tt.opts), 1, r, forSource(parents), ownedBy(children, schema.GroupKind{Kind: "Parent"}))
			require.NoError(t, err)
			start(t, c)

			parent := object("ns", "p")
			parents.add(parent)
			require.Equal(t, 1, receive(t, calls, "first reconcile"))
			// The child's creation queues the parent again (an owned
			// object's event); the cache catches up a little later.
			parents.update(parent, parent)
			time.AfterFunc(50*time.Millisecond, children.catchUp)
			require.Equal(t, 2, receive(t, calls, "second reconcile"))

			assert.Equal(t, tt.wantChildren, children.onServer())
			assert.Equal(t, tt.wantWaits, metric(t, e.reg, "operator_reconcile_cache_waits_total", "controller", "ryow"))
		})
	}
}

// TestReadYourOwnWritesTimesOutIntoARetry: a cache that does not catch up
// within the timeout fails the reconcile (retried with back-off) instead of
// reconciling on stale state; once it catches up the retry succeeds.
func TestReadYourOwnWritesTimesOutIntoARetry(t *testing.T) {
	t.Parallel()
	e := newEnv()
	parents, children := newSource("Parent"), &laggingChildren{}
	calls := make(chan int, 10)
	r := newRecorder(func(ctx context.Context, _ ports.Request, n int) (ports.Result, error) {
		if children.listCached() == 0 {
			children.create(ctx, "p")
		}
		calls <- n
		return ports.Result{}, nil
	})
	c, err := newController("ryow-timeout", withOptions(e.deps, controller.Options{ReadYourWritesTimeout: 30 * time.Millisecond}), 1, r, forSource(parents), ownedBy(children, schema.GroupKind{Kind: "Parent"}))
	require.NoError(t, err)
	start(t, c)

	parent := object("ns", "p")
	parents.add(parent)
	require.Equal(t, 1, receive(t, calls, "first reconcile"))
	parents.update(parent, parent)

	require.Eventually(t, func() bool {
		return metric(t, e.reg, "controller_runtime_reconcile_errors_total", "controller", "ryow-timeout") >= 1
	}, waitFor, tick, "the wait timed out into an error")
	assert.Equal(t, 1, r.count(req("ns", "p")), "the reconciler did not run on the stale cache")
	require.NotEmpty(t, e.logs.FilterMessage("reconcile failed").FilterFieldKey("error").All())
	assert.Contains(t, e.logs.FilterMessage("reconcile failed").All()[0].ContextMap()["error"], "Child.example.io at resourceVersion 1")

	children.catchUp()
	require.Equal(t, 2, receive(t, calls, "retry after the cache caught up"))
	assert.Equal(t, 1, children.onServer())
}

// TestReadYourOwnWritesLedgerIsSwept: objects reconciled once and never
// again leave nothing behind once their writes are applied.
func TestReadYourOwnWritesLedgerIsSwept(t *testing.T) {
	t.Parallel()
	e := newEnv()
	parents, children := newSource("Parent"), &laggingChildren{}
	r := newRecorder(func(ctx context.Context, _ ports.Request, _ int) (ports.Result, error) {
		children.create(ctx, "p")
		children.catchUp()
		return ports.Result{}, nil
	})
	c, err := newController("ryow-sweep", e.deps, 1, r, forSource(parents), ownedBy(children, schema.GroupKind{Kind: "Parent"}))
	require.NoError(t, err)
	start(t, c)
	const n = 2000
	for i := range n {
		parents.add(object("ns", strconv.Itoa(i)))
	}
	require.Eventually(t, func() bool { return r.total() == n }, waitFor, tick)
	assert.LessOrEqual(t, controller.LedgerLen(c), 256, "applied writes are swept as the ledger grows")
}
