package webhook

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, g.Write(&m))
	return m.GetGauge().GetValue()
}

// Clients of the budget tests, each its own address.
var (
	clientA = netip.MustParseAddr("10.0.0.1")
	clientB = netip.MustParseAddr("10.0.0.2")
	clientC = netip.MustParseAddr("10.0.0.3")
	clientD = netip.MustParseAddr("2001:db8::4")
)

func TestBudgetKeepsAReserveAndHoldsEachClientToItsShare(t *testing.T) {
	t.Parallel()
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"})
	// Four slots of 16 KiB: a 64 KiB reserve out of 256 KiB; large parts
	// fill 192 KiB at most, 96 KiB of it from one address.
	b := newBudget(256<<10, 4, gauge)
	require.Equal(t, int64(192<<10), b.maxLarge)
	require.Equal(t, int64(96<<10), b.shareLarge)
	require.Equal(t, int64(112<<10), b.maxBody())

	// Bodies a1 and a2 of client A, b of B, c of C, d of D, each growing
	// from what it held.
	steps := []struct {
		name      string
		client    netip.Addr
		held, n   int64
		wantErr   error
		wantBytes int64
		wantLarge int64
		wantA     int64 // the large parts A holds
	}{
		{name: "a1: its small part", client: clientA, held: 0, n: 16 << 10, wantBytes: 16 << 10},
		{name: "a1: growing up to A's share of large parts", client: clientA, held: 16 << 10, n: 96 << 10, wantBytes: 112 << 10, wantLarge: 96 << 10, wantA: 96 << 10},
		{name: "a1: not a byte past A's share", client: clientA, held: 112 << 10, n: 1, wantErr: errShareSpent, wantBytes: 112 << 10, wantLarge: 96 << 10, wantA: 96 << 10},
		{name: "a2: A's next small part, out of the reserve", client: clientA, held: 0, n: 16 << 10, wantBytes: 128 << 10, wantLarge: 96 << 10, wantA: 96 << 10},
		{name: "b: a small body of B", client: clientB, held: 0, n: 8 << 10, wantBytes: 136 << 10, wantLarge: 96 << 10, wantA: 96 << 10},
		{name: "b: B's share, up to the ceiling of large parts", client: clientB, held: 8 << 10, n: 104 << 10, wantBytes: 240 << 10, wantLarge: 192 << 10, wantA: 96 << 10},
		{name: "c: a large part past the ceiling, within C's share", client: clientC, held: 0, n: 17 << 10, wantErr: errOverBudget, wantBytes: 240 << 10, wantLarge: 192 << 10, wantA: 96 << 10},
		{name: "c: its small part fills the rest", client: clientC, held: 0, n: 16 << 10, wantBytes: 256 << 10, wantLarge: 192 << 10, wantA: 96 << 10},
		{name: "d: not past the whole budget", client: clientD, held: 0, n: 1, wantErr: errOverBudget, wantBytes: 256 << 10, wantLarge: 192 << 10, wantA: 96 << 10},
	}
	for _, s := range steps {
		err := b.reserve(s.client, s.held, s.n)
		if s.wantErr == nil {
			assert.NoError(t, err, s.name)
		} else {
			assert.Equal(t, s.wantErr, err, s.name)
		}
		assert.Equal(t, s.wantBytes, b.bytes, s.name)
		assert.Equal(t, s.wantLarge, b.large, s.name)
		assert.Equal(t, s.wantA, b.clients[clientA].large, s.name)
		assert.Equal(t, float64(s.wantBytes), gaugeValue(t, gauge), s.name)
	}
	assert.True(t, errors.Is(errShareSpent, errOverBudget), "callers that need not tell see the budget spent")
	for _, body := range []struct {
		client netip.Addr
		held   int64
	}{{clientA, 112 << 10}, {clientA, 16 << 10}, {clientB, 112 << 10}, {clientC, 16 << 10}} {
		b.release(body.client, body.held)
	}
	assert.Zero(t, b.bytes)
	assert.Zero(t, b.large)
	assert.Empty(t, b.clients, "addresses that hold nothing are forgotten")
	assert.Zero(t, gaugeValue(t, gauge))
}

// One address takes at most half of the request slots, and opens at most
// as many connections, whatever the others leave free.
func TestBudgetSlotsAndConnectionsPerClient(t *testing.T) {
	t.Parallel()
	type op int
	const (
		enter op = iota
		leave
		connect
		disconnect
	)
	type step = struct {
		op      op
		client  netip.Addr
		wantErr error
		wantOK  bool
	}
	cases := []struct {
		name        string
		maxRequests int
		steps       []step
	}{
		{
			name:        "slots: half each, the rest to others",
			maxRequests: 4,
			steps: []step{
				{op: enter, client: clientA},
				{op: enter, client: clientA},
				{op: enter, client: clientA, wantErr: errShareTaken},
				{op: enter, client: clientB},
				{op: enter, client: clientC},
				{op: enter, client: clientD, wantErr: errTooManyRequests},
				{op: leave, client: clientA},
				{op: enter, client: clientD},
				{op: enter, client: clientA, wantErr: errTooManyRequests},
				{op: leave, client: clientB},
				{op: enter, client: clientA},
				{op: leave, client: clientA},
				{op: leave, client: clientA},
				{op: leave, client: clientC},
				{op: leave, client: clientD},
			},
		},
		{
			name:        "slots: an odd number rounds the share down",
			maxRequests: 5,
			steps: []step{
				{op: enter, client: clientA},
				{op: enter, client: clientA},
				{op: enter, client: clientA, wantErr: errShareTaken},
				{op: leave, client: clientA},
				{op: leave, client: clientA},
			},
		},
		{
			name:        "slots: a single slot is one client's",
			maxRequests: 1,
			steps: []step{
				{op: enter, client: clientA},
				{op: enter, client: clientB, wantErr: errTooManyRequests},
				{op: leave, client: clientA},
				{op: enter, client: clientB},
				{op: leave, client: clientB},
			},
		},
		{
			name:        "connections: as many as a share of slots",
			maxRequests: 4,
			steps: []step{
				{op: connect, client: clientA, wantOK: true},
				{op: connect, client: clientA, wantOK: true},
				{op: connect, client: clientA, wantOK: false},
				{op: connect, client: clientB, wantOK: true},
				{op: connect, client: clientB, wantOK: true},
				{op: connect, client: clientC, wantOK: true},
				{op: disconnect, client: clientA},
				{op: connect, client: clientA, wantOK: true},
				{op: disconnect, client: clientA},
				{op: disconnect, client: clientA},
				{op: disconnect, client: clientB},
				{op: disconnect, client: clientB},
				{op: disconnect, client: clientC},
			},
		},
		{
			name:        "connections and slots of one client are counted apart",
			maxRequests: 2,
			steps: []step{
				{op: connect, client: clientA, wantOK: true},
				{op: enter, client: clientA},
				{op: connect, client: clientA, wantOK: false},
				{op: enter, client: clientA, wantErr: errShareTaken},
				{op: leave, client: clientA},
				{op: disconnect, client: clientA},
			},
		},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBudget(1<<20, tt.maxRequests, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
			for i, s := range tt.steps {
				switch s.op {
				case enter:
					err := b.enter(s.client)
					if s.wantErr == nil {
						require.NoError(t, err, "step %d", i)
					} else {
						require.Equal(t, s.wantErr, err, "step %d", i)
					}
				case leave:
					b.leave(s.client)
				case connect:
					require.Equal(t, s.wantOK, b.connect(s.client), "step %d", i)
				case disconnect:
					b.disconnect(s.client)
				}
				assert.LessOrEqual(t, b.requests, tt.maxRequests, "step %d", i)
			}
			assert.Zero(t, b.requests, "every slot given back")
			assert.Empty(t, b.clients, "addresses that hold nothing are forgotten")
		})
	}
}

func TestLeaseSlot(t *testing.T) {
	t.Parallel()
	b := newBudget(1<<20, 2, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
	first, second, third := lease{budget: b, client: clientA}, lease{budget: b, client: clientB}, lease{budget: b, client: clientC}
	require.NoError(t, first.enter())
	require.NoError(t, first.enter(), "entering twice takes one slot")
	require.NoError(t, second.enter())
	assert.Equal(t, errTooManyRequests, third.enter(), "all slots taken")
	first.release()
	first.release() // a second release gives back nothing more
	assert.NoError(t, third.enter())
	assert.Equal(t, errTooManyRequests, first.enter())
	second.release()
	third.release()
	assert.Zero(t, b.requests)
	assert.Empty(t, b.clients)
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
	r.seen = append(r.seen, r.budget.bytes)
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
		// 1 MiB with 512 slots: large parts fill 512 KiB, 256 KiB of them
		// from one address.
		{name: "past its client's share of the budget", budget: 1 << 20, declared: 2 << 20, chunks: [][]byte{x(2 << 20)}, end: io.EOF, wantErr: errShareSpent, wantMaxOut: 256 << 10},
		{name: "empty", declared: 0, end: io.EOF, wantLen: 0, wantMaxOut: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			size := tt.budget
			if size == 0 {
				size = DefaultMaxBodyBytesInFlight
			}
			b := newBudget(size, DefaultMaxRequestsInFlight, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
			src := &reads{chunks: tt.chunks, end: tt.end, budget: b}
			l := lease{budget: b, client: clientA}
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
			peak := b.bytes
			for _, v := range src.seen {
				peak = max(peak, v)
			}
			assert.Equal(t, tt.wantMaxOut, peak, "most the budget held")
			l.release()
			assert.Zero(t, b.bytes, "all given back")
			assert.Zero(t, b.requests)
			assert.Empty(t, b.clients)
		})
	}
}
