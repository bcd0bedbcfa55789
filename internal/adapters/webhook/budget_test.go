package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Clients of the budget tests, each its own address.
var (
	clientA = netip.MustParseAddr("10.0.0.1")
	clientB = netip.MustParseAddr("10.0.0.2")
	clientC = netip.MustParseAddr("10.0.0.3")
	clientD = netip.MustParseAddr("2001:db8::4")
)

// hoarderAddrs are n addresses other than the clients above.
func hoarderAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{10, 1, 0, byte(i + 1)})
	}
	return out
}

// testConn is a client's connection as the budget sees it: Close records
// the reset that gives it up.
type testConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *testConn) Close() error {
	c.closed.Store(true)
	return nil
}

// testBudget is a budget whose connections and requests a test opens by
// hand, with its metrics.
type testBudget struct {
	*budget
	gauge   prometheus.Gauge
	evicted *prometheus.CounterVec // connections, by resource
	onEvict prometheus.Counter     // requests
}

func newTestBudget(maxBytes int64, maxRequests int) *testBudget {
	tb := &testBudget{
		gauge:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e"}, []string{"resource"}),
		onEvict: prometheus.NewCounter(prometheus.CounterOpts{Name: "r"}),
	}
	tb.budget = newBudget(maxBytes, maxRequests, tb.gauge, tb.evicted)
	return tb
}

// dial opens a connection from client.
func (tb *testBudget) dial(client netip.Addr) (*shareConn, error) {
	c := &shareConn{Conn: &testConn{}, budget: tb.budget, client: client}
	if err := tb.connect(c); err != nil {
		return nil, err
	}
	return c, nil
}

// request is a request on c that has asked for its slot.
func (tb *testBudget) request(c *shareConn) (*lease, error) {
	l := &lease{budget: tb.budget, client: c.client, conn: c, onEvict: tb.onEvict}
	return l, l.enter()
}

// evictions are the connections given up for r.
func (tb *testBudget) evictions(r item) float64 {
	return testutil.ToFloat64(tb.evicted.WithLabelValues(itemNames[r]))
}

// assertEmpty checks that everything was given back.
func (tb *testBudget) assertEmpty(t *testing.T) {
	t.Helper()
	assert.Equal(t, amounts{}, tb.used, "nothing held")
	assert.Equal(t, [itemCount]int64{}, tb.holders, "no holders")
	assert.Empty(t, tb.clients, "addresses that hold nothing are forgotten")
	assert.Zero(t, testutil.ToFloat64(tb.gauge))
}

func wasReset(c *shareConn) bool { return c.Conn.(*testConn).closed.Load() }

// Hoarding addresses fill every request slot; a newcomer is served up to
// its fair share of the addresses now active, each of its requests taking
// the oldest request of the largest holder; past its share, and for a
// hoarder at its share, the server is full. Once the others leave, the
// last hoarder may take every slot again.
func TestBudgetGivesANewcomerItsFairShareOfRequests(t *testing.T) {
	t.Parallel()
	const slots = 16
	tests := []struct {
		hoarders int
		share    int // the newcomer's: slots divided among hoarders and newcomer
	}{
		{hoarders: 1, share: 8},
		{hoarders: 2, share: 5},
		{hoarders: 8, share: 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d hoarding addresses", tt.hoarders), func(t *testing.T) {
			t.Parallel()
			b := newTestBudget(1<<20, slots)
			// As if HTTP/2 carried more than one request a connection:
			// here the request slots run out first.
			b.limit[connections] *= 4
			hoarders := hoarderAddrs(tt.hoarders)
			var conns []*shareConn
			dial := func(client netip.Addr) *shareConn {
				c, err := b.dial(client)
				require.NoError(t, err, "connections are not full")
				conns = append(conns, c)
				return c
			}
			var held []*lease // the hoarders', oldest first
			for i := range slots {
				l, err := b.request(dial(hoarders[i%tt.hoarders]))
				require.NoError(t, err)
				held = append(held, l)
			}

			_, err := b.request(dial(hoarders[0]))
			assert.ErrorIs(t, err, errShareTaken, "a hoarder at its share is refused")

			newcomer := clientA
			var mine []*lease
			for i := range tt.share {
				l, err := b.request(dial(newcomer))
				require.NoError(t, err, "newcomer's request %d, below its share", i)
				mine = append(mine, l)
				assert.Equal(t, int64(slots), b.used[requests], "every slot taken")
			}
			_, err = b.request(dial(newcomer))
			assert.ErrorIs(t, err, errShareTaken, "the newcomer at its share is refused")

			// The oldest requests were given up, their connections reset.
			for i, l := range held {
				given := i < tt.share
				assert.Equal(t, given, l.wasEvicted(), "hoarders' request %d given up", i)
				assert.Equal(t, given, wasReset(l.conn), "hoarders' request %d reset", i)
			}
			assert.Equal(t, float64(tt.share), testutil.ToFloat64(b.onEvict))
			assert.Equal(t, float64(tt.share), b.evictions(requests))
			assert.Equal(t, int64(tt.share), b.clients[newcomer].held[requests])
			for _, h := range hoarders {
				assert.GreaterOrEqual(t, b.clients[h].held[requests], int64(tt.share), "no hoarder left below the newcomer's share")
			}

			// A request given up gives back nothing more when its handler
			// returns, nor its connection when it closes.
			for _, l := range held[:tt.share] {
				l.release()
				require.NoError(t, l.conn.Close())
			}
			assert.Equal(t, int64(slots), b.used[requests])
			assert.Equal(t, int64(len(conns)-tt.share), b.used[connections])

			// Shares grow back as addresses leave.
			for _, l := range append(mine, held[tt.share:]...) {
				if l.client != hoarders[0] {
					l.release()
				}
			}
			for _, c := range conns {
				if c.client != hoarders[0] {
					require.NoError(t, c.Close())
				}
			}
			for b.used[requests] < slots {
				l, err := b.request(dial(hoarders[0]))
				require.NoError(t, err, "the last address takes the free slots")
				held = append(held, l)
			}
			_, err = b.request(dial(hoarders[0]))
			assert.ErrorIs(t, err, errShareTaken, "alone, its share is every slot")
			assert.Equal(t, float64(tt.share), testutil.ToFloat64(b.onEvict), "nothing given up for an address alone")

			for _, l := range append(held, mine...) {
				l.release()
			}
			for _, c := range conns {
				require.NoError(t, c.Close())
			}
			b.assertEmpty(t)
		})
	}
}

// Connections are shared the same way: a newcomer below its share takes
// the largest holder's oldest connection that carries no request. With
// more addresses than connections, every share is less than one: the
// newcomer is refused, which is what a network policy is for.
func TestBudgetGivesANewcomerItsFairShareOfConnections(t *testing.T) {
	t.Parallel()
	const slots = 16 // and as many connections
	tests := []struct {
		hoarders int
		share    int
	}{
		{hoarders: 1, share: 8},
		{hoarders: 2, share: 5},
		{hoarders: 8, share: 1},
		{hoarders: 16, share: 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d hoarding addresses", tt.hoarders), func(t *testing.T) {
			t.Parallel()
			b := newTestBudget(1<<20, slots)
			hoarders := hoarderAddrs(tt.hoarders)
			var conns []*shareConn
			for i := range slots {
				c, err := b.dial(hoarders[i%tt.hoarders])
				require.NoError(t, err)
				conns = append(conns, c)
			}
			// The oldest connection carries a request: it is not idle.
			busy, err := b.request(conns[0])
			require.NoError(t, err)

			_, err = b.dial(hoarders[0])
			assert.ErrorIs(t, err, errConnShareTaken, "a hoarder at its share is refused")

			var mine []*shareConn
			for i := range tt.share {
				c, err := b.dial(clientA)
				require.NoError(t, err, "newcomer's connection %d, below its share", i)
				mine = append(mine, c)
			}
			_, err = b.dial(clientA)
			assert.ErrorIs(t, err, errConnShareTaken, "the newcomer at its share is refused")

			for i, c := range conns {
				given := i >= 1 && i < 1+tt.share
				assert.Equal(t, given, wasReset(c), "hoarders' connection %d reset", i)
			}
			assert.False(t, busy.wasEvicted(), "a connection with a request outlasts idle ones")
			assert.Equal(t, float64(tt.share), b.evictions(connections))
			assert.Zero(t, testutil.ToFloat64(b.onEvict), "no request given up")
			if tt.share > 0 {
				_, err := b.request(conns[1])
				assert.ErrorIs(t, err, errEvicted, "a request that arrives on a connection given up")
				assert.Equal(t, 1.0, testutil.ToFloat64(b.onEvict), "is counted as given up")
			}

			busy.release()
			for _, c := range append(conns, mine...) {
				require.NoError(t, c.Close())
			}
			b.assertEmpty(t)
		})
	}
}

// A new connection of an address at its share of a full server replaces
// the address's own oldest connection that has carried a request and
// carries none now, whatever its share, its last one included; one that
// carries a request, or has yet to carry one, is never given up for it.
func TestBudgetReplacesAnAddresssOwnIdleConnectionAtItsShare(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d connections", slots), func(t *testing.T) {
			t.Parallel()
			b := newTestBudget(1<<20, slots)
			var idle, fresh []*shareConn
			var leases []*lease
			for range slots {
				c, err := b.dial(clientA)
				require.NoError(t, err)
				l, err := b.request(c)
				require.NoError(t, err)
				l.release() // a keep-alive, or closed by its client unseen
				idle = append(idle, c)
			}
			for i := range slots {
				c, err := b.dial(clientA)
				require.NoError(t, err, "connection %d past the share", i)
				assert.True(t, wasReset(idle[i]), "the oldest idle connection, %d, is given up", i)
				if i+1 < slots {
					assert.False(t, wasReset(idle[i+1]), "and no other")
				}
				l, err := b.request(c)
				require.NoError(t, err)
				fresh, leases = append(fresh, c), append(leases, l)
			}
			_, err := b.dial(clientA)
			assert.ErrorIs(t, err, errConnShareTaken, "every connection carries a request")
			assert.Equal(t, float64(slots), b.evictions(connections))
			assert.Zero(t, testutil.ToFloat64(b.onEvict), "no request given up")
			for _, l := range leases {
				l.release()
			}
			for _, c := range append(idle, fresh...) {
				require.NoError(t, c.Close())
			}
			b.assertEmpty(t)

			// Connections yet to carry their first request.
			for range slots {
				c, err := b.dial(clientA)
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
			}
			_, err = b.dial(clientA)
			assert.ErrorIs(t, err, errConnShareTaken, "no connection has carried a request")
		})
	}
}

// Body bytes past each body's small part are shared too: a newcomer
// within its share takes them from the largest holder's body that is
// still being read, and a holder past its share is refused.
func TestBudgetSharesLargeBodiesFairly(t *testing.T) {
	t.Parallel()
	// Four slots of 16 KiB: a 64 KiB reserve out of 256 KiB; large parts
	// fill 192 KiB at most.
	b := newTestBudget(256<<10, 4)
	require.Equal(t, int64(192<<10), b.limit[largeBytes])
	require.Equal(t, int64(208<<10), b.maxBody())

	bodies := map[string]*lease{}
	for _, name := range []string{"a1", "a2", "b", "c"} {
		client := map[byte]netip.Addr{'a': clientA, 'b': clientB, 'c': clientC}[name[0]]
		c, err := b.dial(client)
		require.NoError(t, err)
		l, err := b.request(c)
		require.NoError(t, err)
		bodies[name] = l
	}
	steps := []struct {
		name      string
		body      string
		n         int64
		wantErr   error
		wantBytes int64
		wantLarge int64
		wantReset string // the body given up
	}{
		{name: "its small part", body: "a1", n: 16 << 10, wantBytes: 16 << 10},
		{name: "A alone grows into the large part", body: "a1", n: 176 << 10, wantBytes: 192 << 10, wantLarge: 176 << 10},
		{name: "A fills the large part", body: "a2", n: 32 << 10, wantBytes: 224 << 10, wantLarge: 192 << 10},
		{name: "A alone holds its share: all of it", body: "a2", n: 1, wantErr: errShareSpent, wantBytes: 224 << 10, wantLarge: 192 << 10},
		{name: "B's small part, out of the reserve", body: "b", n: 16 << 10, wantBytes: 240 << 10, wantLarge: 192 << 10},
		{name: "B within half takes A's oldest body", body: "b", n: 32 << 10, wantBytes: 80 << 10, wantLarge: 48 << 10, wantReset: "a1"},
		{name: "C while there is room", body: "c", n: 128 << 10, wantBytes: 208 << 10, wantLarge: 160 << 10},
		{name: "B past a third is refused", body: "b", n: 64 << 10, wantErr: errShareSpent, wantBytes: 208 << 10, wantLarge: 160 << 10},
		{name: "A within a third takes from C, the largest", body: "a2", n: 48 << 10, wantBytes: 128 << 10, wantLarge: 96 << 10, wantReset: "c"},
	}
	var reset []string
	for _, s := range steps {
		err := b.reserve(bodies[s.body], s.n)
		if s.wantErr == nil {
			assert.NoError(t, err, s.name)
		} else {
			assert.Equal(t, s.wantErr, err, s.name)
		}
		if s.wantReset != "" {
			reset = append(reset, s.wantReset)
		}
		for name, l := range bodies {
			assert.Equal(t, slices.Contains(reset, name), wasReset(l.conn), "%s: body %s reset", s.name, name)
		}
		assert.Equal(t, s.wantBytes, b.used[bodyBytes], s.name)
		assert.Equal(t, s.wantLarge, b.used[largeBytes], s.name)
		assert.Equal(t, float64(s.wantBytes), testutil.ToFloat64(b.gauge), s.name)
	}
	assert.Equal(t, float64(2), b.evictions(largeBytes))
	assert.ErrorIs(t, b.reserve(bodies["a1"], 1), errEvicted, "a body given up grows no more")
	assert.True(t, errors.Is(errShareSpent, errOverBudget), "callers that need not tell see the budget spent")
	for _, l := range bodies {
		l.release()
		require.NoError(t, l.conn.Close())
	}
	b.assertEmpty(t)
}

// A request served without the listener has no connection to reset, so it
// cannot be given up: a full server then refuses the newcomer.
func TestBudgetRefusesWhenNothingCanBeGivenUp(t *testing.T) {
	t.Parallel()
	b := newTestBudget(1<<20, 2)
	first, second := &lease{budget: b.budget, client: clientA}, &lease{budget: b.budget, client: clientA}
	require.NoError(t, first.enter())
	require.NoError(t, second.enter())
	c, err := b.dial(clientB)
	require.NoError(t, err)
	_, err = b.request(c)
	assert.Equal(t, errTooManyRequests, err)
	assert.Zero(t, b.evictions(requests))
	first.release()
	second.release()
	require.NoError(t, c.Close())
	b.assertEmpty(t)
}

func TestLeaseEntersAndReleasesOnce(t *testing.T) {
	t.Parallel()
	b := newTestBudget(1<<20, 2)
	c, err := b.dial(clientA)
	require.NoError(t, err)
	l, err := b.request(c)
	require.NoError(t, err)
	require.NoError(t, l.enter(), "entering twice takes one slot")
	assert.Equal(t, int64(1), b.used[requests])
	require.NoError(t, l.budget.reserve(l, 20<<10))
	l.dropBytes()
	l.dropBytes()
	assert.Equal(t, amounts{connections: 1, requests: 1}, b.used, "bytes given back once")
	l.release()
	l.release()
	assert.Equal(t, amounts{connections: 1}, b.used, "the slot given back once")
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	b.assertEmpty(t)
}

// Many addresses connecting, reading bodies, being given up and leaving
// at once never take more than the budget has, and give everything back.
func TestBudgetUnderConcurrentUseLeaksNothing(t *testing.T) {
	t.Parallel()
	const slots = 8
	b := newTestBudget(256<<10, slots)
	addrs := append(hoarderAddrs(5), clientA)
	var wg sync.WaitGroup
	for w := range 24 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 300 {
				c, err := b.dial(addrs[rng.IntN(len(addrs))])
				if err != nil {
					continue
				}
				if l, err := b.request(c); err == nil {
					for range rng.IntN(4) {
						if b.reserve(l, int64(rng.IntN(64<<10)+1)) != nil {
							break
						}
					}
					b.mu.Lock()
					for r, n := range b.used {
						assert.LessOrEqual(t, n, b.limit[r], "%s", itemNames[r])
					}
					b.mu.Unlock()
					l.release()
				}
				assert.NoError(t, c.Close())
			}
		})
	}
	wg.Wait()
	b.assertEmpty(t)
}

// reads is a body as a client sends it: each Read returns the next chunk,
// then end. seen records what the budget held at each Read.
type reads struct {
	chunks [][]byte
	end    error
	budget *budget
	seen   []int64
}

func (r *reads) Read(p []byte) (int, error) {
	r.seen = append(r.seen, r.budget.used[bodyBytes])
	if len(r.chunks) == 0 {
		return 0, r.end
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestLeaseReadAllGrowsWithWhatArrives(t *testing.T) {
	t.Parallel()
	const limit = 7 << 20
	x := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	disconnect := io.ErrUnexpectedEOF
	tests := []struct {
		name       string
		budget     int64
		declared   int64
		chunks     [][]byte
		end        error
		wantLen    int
		wantErr    error
		wantMaxOut int64 // most the budget held while reading
	}{
		{name: "seven MiB declared, ten bytes sent, client gone", declared: limit, chunks: [][]byte{x(10)}, end: disconnect, wantErr: disconnect, wantMaxOut: 4 << 10},
		{name: "a review of its declared length", declared: 5000, chunks: [][]byte{x(3000), x(2000)}, end: io.EOF, wantLen: 5000, wantMaxOut: 5000},
		{name: "a body of unknown length", declared: -1, chunks: [][]byte{x(60 << 10), x(40 << 10)}, end: io.EOF, wantLen: 100 << 10, wantMaxOut: 128 << 10},
		{name: "declared, slowly", declared: 1 << 20, chunks: [][]byte{x(1), x(1), x(1)}, end: disconnect, wantErr: disconnect, wantMaxOut: 4 << 10},
		{name: "unknown length exactly at the limit", declared: -1, chunks: [][]byte{x(limit)}, end: io.EOF, wantLen: limit, wantMaxOut: limit},
		{name: "unknown length past the limit", declared: -1, chunks: [][]byte{x(limit), x(1)}, end: io.EOF, wantErr: errTooLarge, wantMaxOut: limit},
		// 1 MiB with 512 slots: large parts fill 512 KiB, all of them
		// from an address alone.
		{name: "past its client's share of the budget", budget: 1 << 20, declared: 2 << 20, chunks: [][]byte{x(2 << 20)}, end: io.EOF, wantErr: errShareSpent, wantMaxOut: 512 << 10},
		{name: "empty", declared: 0, end: io.EOF, wantLen: 0, wantMaxOut: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			size := tt.budget
			if size == 0 {
				size = DefaultMaxBodyBytesInFlight
			}
			b := newTestBudget(size, DefaultMaxRequestsInFlight)
			src := &reads{chunks: tt.chunks, end: tt.end, budget: b.budget}
			l := lease{budget: b.budget, client: clientA}
			require.NoError(t, l.enter())

			body, err := l.readAll(src, tt.declared, limit)

			if tt.wantErr != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tt.wantErr), "got %v", err)
				assert.Nil(t, body)
			} else {
				require.NoError(t, err)
				assert.Len(t, body, tt.wantLen)
			}
			assert.False(t, l.reading, "the body is no longer being read")
			peak := b.used[bodyBytes]
			for _, v := range src.seen {
				peak = max(peak, v)
			}
			assert.Equal(t, tt.wantMaxOut, peak, "most the budget held")
			l.release()
			b.assertEmpty(t)
		})
	}
}
