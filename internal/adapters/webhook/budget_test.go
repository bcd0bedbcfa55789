package webhook

import (
	"bytes"
	"errors"
	"io"
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

func TestBudgetKeepsAReserveForTheFirstBytesOfEachBody(t *testing.T) {
	t.Parallel()
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"})
	// Four slots of 16 KiB: a 64 KiB reserve out of 256 KiB.
	b := newBudget(256<<10, 4, gauge)
	require.Equal(t, int64(192<<10), b.maxLarge)
	require.Equal(t, int64(208<<10), b.maxBody())

	// Bodies a to e, each growing from what it held.
	steps := []struct {
		name      string
		held, n   int64
		want      bool
		wantBytes int64
		wantLarge int64
	}{
		{name: "a: its small part", held: 0, n: 16 << 10, want: true, wantBytes: 16 << 10},
		{name: "a: growing up to the ceiling of large parts", held: 16 << 10, n: 176 << 10, want: true, wantBytes: 192 << 10, wantLarge: 176 << 10},
		{name: "b: a small body, out of the reserve", held: 0, n: 8 << 10, want: true, wantBytes: 200 << 10, wantLarge: 176 << 10},
		{name: "b: its large part past the ceiling", held: 8 << 10, n: 32 << 10, want: false, wantBytes: 200 << 10, wantLarge: 176 << 10},
		{name: "b: straddling both, its large part fitting", held: 8 << 10, n: 24 << 10, want: true, wantBytes: 224 << 10, wantLarge: 192 << 10},
		{name: "b: not a byte more of large part", held: 32 << 10, n: 1, want: false, wantBytes: 224 << 10, wantLarge: 192 << 10},
		{name: "c: small parts fill the rest", held: 0, n: 16 << 10, want: true, wantBytes: 240 << 10, wantLarge: 192 << 10},
		{name: "d: up to the whole budget", held: 0, n: 16 << 10, want: true, wantBytes: 256 << 10, wantLarge: 192 << 10},
		{name: "e: but not past it", held: 0, n: 1, want: false, wantBytes: 256 << 10, wantLarge: 192 << 10},
	}
	for _, s := range steps {
		assert.Equal(t, s.want, b.reserve(s.held, s.n), s.name)
		assert.Equal(t, s.wantBytes, b.bytes, s.name)
		assert.Equal(t, s.wantLarge, b.large, s.name)
		assert.Equal(t, float64(s.wantBytes), gaugeValue(t, gauge), s.name)
	}
	for _, held := range []int64{192 << 10, 32 << 10, 16 << 10, 16 << 10} { // a, b, c, d
		b.release(held)
	}
	assert.Zero(t, b.bytes)
	assert.Zero(t, b.large)
	assert.Zero(t, gaugeValue(t, gauge))
}

func TestBudgetSlots(t *testing.T) {
	t.Parallel()
	b := newBudget(1<<20, 2, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))
	first, second, third := lease{budget: b}, lease{budget: b}, lease{budget: b}
	require.True(t, first.enter())
	require.True(t, first.enter(), "entering twice takes one slot")
	require.True(t, second.enter())
	assert.False(t, third.enter(), "all slots taken")
	first.release()
	first.release() // a second release gives back nothing more
	assert.True(t, third.enter())
	assert.False(t, first.enter())
	second.release()
	third.release()
	assert.Zero(t, b.requests)
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
		{name: "past the budget", budget: 1 << 20, declared: 2 << 20, chunks: [][]byte{x(2 << 20)}, end: io.EOF, wantErr: errOverBudget, wantMaxOut: 512 << 10},
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
			l := lease{budget: b}
			require.True(t, l.enter())

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
		})
	}
}
