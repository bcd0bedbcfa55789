package webhook

import (
	"errors"
	"io"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	// firstChunkBytes is the first allocation for a body, before its first
	// byte is read: no more than the bufio.Reader net/http already holds
	// for every connection, so a client that declares a large body and
	// sends none of it costs little.
	firstChunkBytes = 4 << 10
	// smallBodyBytes is the part of every body that may use the budget's
	// reserve: an AdmissionReview of an ordinary Pod fits in it, so the
	// API server's usual calls are served while large bodies hold the rest
	// of the budget.
	smallBodyBytes = 16 << 10
)

var (
	// errOverBudget: the budget cannot spare the bytes a body needs next.
	errOverBudget = errors.New("the webhook server's budget of body bytes in flight is spent")
	// errTooLarge: the body goes on past its limit.
	errTooLarge = errors.New("request body too large")
)

// budget bounds what the requests in flight hold at once: a number of
// requests, and the bytes of their bodies' buffers. Nothing waits for it:
// a request it cannot take is refused at once, so a flood is answered
// rather than queued.
//
// The first smallBodyBytes of each body may use all of it; the bytes of a
// body beyond those only maxLarge. The difference is a reserve that
// requests' first bytes alone can use, as large as they can hold when all
// slots are taken (up to half the budget), so large bodies, hostile ones
// included, never starve the small reviews that are nearly all the API
// server sends.
type budget struct {
	maxBytes    int64
	maxLarge    int64
	maxRequests int
	gauge       prometheus.Gauge

	mu       sync.Mutex
	bytes    int64 // guarded by mu
	large    int64 // guarded by mu
	requests int   // guarded by mu
}

func newBudget(maxBytes int64, maxRequests int, gauge prometheus.Gauge) *budget {
	reserve := min(int64(maxRequests)*smallBodyBytes, maxBytes/2)
	return &budget{maxBytes: maxBytes, maxLarge: maxBytes - reserve, maxRequests: maxRequests, gauge: gauge}
}

// maxBody is the largest body the budget could ever hold, were it alone.
func (b *budget) maxBody() int64 {
	return min(b.maxBytes, b.maxLarge+smallBodyBytes)
}

// largePart is how many of a body's first held bytes lie beyond its small
// part.
func largePart(held int64) int64 { return max(held-smallBodyBytes, 0) }

func (b *budget) enter() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.requests >= b.maxRequests {
		return false
	}
	b.requests++
	return true
}

func (b *budget) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests--
}

// reserve takes n more bytes for a body that holds held already, or
// nothing when the budget cannot spare them.
func (b *budget) reserve(held, n int64) bool {
	large := largePart(held+n) - largePart(held)
	b.mu.Lock()
	if b.bytes+n > b.maxBytes || b.large+large > b.maxLarge {
		b.mu.Unlock()
		return false
	}
	b.bytes += n
	b.large += large
	b.mu.Unlock()
	b.gauge.Add(float64(n))
	return true
}

// release gives back everything a body of held bytes took.
func (b *budget) release(held int64) {
	if held == 0 {
		return
	}
	b.mu.Lock()
	b.bytes -= held
	b.large -= largePart(held)
	b.mu.Unlock()
	b.gauge.Sub(float64(held))
}

// A lease is one request's share of the budget: its slot once it entered,
// and the bytes of its body's buffer. It is released when the request's
// handler returns rather than when the body has been read: the decoded
// review lives as long as the request, and is larger than the body.
type lease struct {
	budget  *budget
	entered bool
	bytes   int64
}

// enter takes a request slot; false when all are taken.
func (l *lease) enter() bool {
	if l.entered {
		return true
	}
	l.entered = l.budget.enter()
	return l.entered
}

// dropBytes gives back the body's bytes early, once the body is given up.
func (l *lease) dropBytes() {
	l.budget.release(l.bytes)
	l.bytes = 0
}

func (l *lease) release() {
	l.dropBytes()
	if l.entered {
		l.budget.leave()
		l.entered = false
	}
}

// readAll reads src into a buffer that grows as bytes arrive, reserving
// each growth from the budget first, so a body holds at most twice what
// its client has sent (and firstChunkBytes before that). declared, the
// Content-Length or -1 when unknown, caps the growth but never sizes an
// allocation on its own; limit bounds the body. It fails with
// errOverBudget or errTooLarge, or with what reading failed with. The
// growth abandons buffers to the garbage collector that the budget no
// longer counts: they are at most as large as the buffer that replaced
// them, and the next collection takes them.
func (l *lease) readAll(src io.Reader, declared, limit int64) ([]byte, error) {
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			size := int64(len(buf))
			if size == declared {
				// net/http ends a body at its Content-Length.
				return buf, nil
			}
			if size >= limit {
				if err := atEOF(src); err != nil {
					return nil, err
				}
				return buf, nil
			}
			next := max(2*size, firstChunkBytes)
			if declared >= 0 {
				next = min(next, declared)
			}
			next = min(next, limit)
			if !l.budget.reserve(l.bytes, next-size) {
				return nil, errOverBudget
			}
			l.bytes += next - size
			grown := make([]byte, size, next)
			copy(grown, buf)
			buf = grown
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

// atEOF tells whether src, which filled its limit, ends there: nil when it
// does, errTooLarge when more follows.
func atEOF(src io.Reader) error {
	var one [1]byte
	// A reader that answers neither a byte nor an error a hundred times
	// in a row is broken; bufio gives up on one likewise.
	for range 100 {
		n, err := src.Read(one[:])
		switch {
		case n > 0:
			return errTooLarge
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}
