package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	// firstChunkBytes is a body's first allocation, before a byte is read:
	// a client that declares a large body and sends none costs little.
	firstChunkBytes = 4 << 10
	// smallBodyBytes of every body may use the budget's reserve: an
	// ordinary Pod's review fits, so it is served while large bodies hold
	// the rest.
	smallBodyBytes = 16 << 10
)

var (
	errOverBudget      = errors.New("the webhook server's budget of body bytes in flight is spent")
	errShareSpent      = fmt.Errorf("%w for this client address", errOverBudget)
	errTooManyRequests = errors.New("every request slot of the webhook server is taken")
	errShareTaken      = fmt.Errorf("%w that this client address may hold", errTooManyRequests)
	errTooLarge        = errors.New("request body too large")
)

// budget bounds what the requests in flight hold at once: a number of
// requests, and the bytes of their bodies' buffers. A request it cannot
// take is refused at once, so a flood is answered rather than queued.
//
// The first smallBodyBytes of each body may use all of it, the rest of a
// body only maxLarge: the difference is a reserve (up to half the budget)
// that keeps large bodies, hostile ones included, from starving the small
// reviews that are nearly all the API server sends.
//
// One client address may hold at most half of the request slots (and as
// many connections) and half of maxLarge, so that whoever connects first
// cannot lock the API server out. The share is fixed: nothing waits, so
// what an address took alone could not be taken back for a later client.
type budget struct {
	maxBytes      int64
	maxLarge      int64
	maxRequests   int
	shareRequests int // one client address's share
	shareLarge    int64
	gauge         prometheus.Gauge

	mu       sync.Mutex
	bytes    int64                     // guarded by mu
	large    int64                     // guarded by mu
	requests int                       // guarded by mu
	clients  map[netip.Addr]*clientUse // guarded by mu; only addresses that hold something
}

// clientUse is what one client address holds of the budget.
type clientUse struct {
	conns    int
	requests int
	large    int64
}

func newBudget(maxBytes int64, maxRequests int, gauge prometheus.Gauge) *budget {
	reserve := min(int64(maxRequests)*smallBodyBytes, maxBytes/2)
	maxLarge := maxBytes - reserve
	return &budget{
		maxBytes: maxBytes, maxLarge: maxLarge, maxRequests: maxRequests,
		shareRequests: max(maxRequests/2, 1), shareLarge: maxLarge / 2,
		gauge:   gauge,
		clients: map[netip.Addr]*clientUse{},
	}
}

// maxBody is the largest body the budget could ever hold, were its client
// alone.
func (b *budget) maxBody() int64 {
	return min(b.maxBytes, b.shareLarge+smallBodyBytes)
}

// largePart is how many of held bytes lie beyond a body's small part.
func largePart(held int64) int64 { return max(held-smallBodyBytes, 0) }

// use is what client holds, created on first use; b.mu must be held.
func (b *budget) use(client netip.Addr) *clientUse {
	u := b.clients[client]
	if u == nil {
		u = &clientUse{}
		b.clients[client] = u
	}
	return u
}

// forget drops client's entry once it holds nothing; b.mu must be held.
func (b *budget) forget(client netip.Addr, u *clientUse) {
	if *u == (clientUse{}) {
		delete(b.clients, client)
	}
}

// connect counts a new connection from client, or refuses it when client
// has as many open as its share of request slots: over HTTP/1.1 more could
// not be served at once, and each holds a goroutine and buffers.
func (b *budget) connect(client netip.Addr) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.use(client)
	if u.conns >= b.shareRequests {
		b.forget(client, u)
		return false
	}
	u.conns++
	return true
}

func (b *budget) disconnect(client netip.Addr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.use(client)
	u.conns--
	b.forget(client, u)
}

// enter takes a request slot for client: errTooManyRequests when all are
// taken, errShareTaken when client holds its share.
func (b *budget) enter(client netip.Addr) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.requests >= b.maxRequests {
		return errTooManyRequests
	}
	u := b.use(client)
	if u.requests >= b.shareRequests {
		b.forget(client, u)
		return errShareTaken
	}
	b.requests++
	u.requests++
	return nil
}

func (b *budget) leave(client netip.Addr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests--
	u := b.use(client)
	u.requests--
	b.forget(client, u)
}

// reserve takes n more bytes for a body of client that holds held
// already: errOverBudget when the budget cannot spare them, errShareSpent
// when client's share cannot.
func (b *budget) reserve(client netip.Addr, held, n int64) error {
	large := largePart(held+n) - largePart(held)
	b.mu.Lock()
	if b.bytes+n > b.maxBytes || b.large+large > b.maxLarge {
		b.mu.Unlock()
		return errOverBudget
	}
	u := b.use(client)
	if u.large+large > b.shareLarge {
		b.forget(client, u)
		b.mu.Unlock()
		return errShareSpent
	}
	b.bytes += n
	b.large += large
	u.large += large
	b.mu.Unlock()
	b.gauge.Add(float64(n))
	return nil
}

// release gives back everything a body of client of held bytes took.
func (b *budget) release(client netip.Addr, held int64) {
	if held == 0 {
		return
	}
	b.mu.Lock()
	b.bytes -= held
	b.large -= largePart(held)
	u := b.use(client)
	u.large -= largePart(held)
	b.forget(client, u)
	b.mu.Unlock()
	b.gauge.Sub(float64(held))
}

// A lease is one request's share of the budget: its slot once it entered,
// and its body's bytes. It is released when the handler returns, not when
// the body is read: the decoded review lives as long as the request.
type lease struct {
	budget  *budget
	client  netip.Addr
	entered bool
	bytes   int64
}

// enter takes a request slot, or fails as budget.enter does.
func (l *lease) enter() error {
	if l.entered {
		return nil
	}
	if err := l.budget.enter(l.client); err != nil {
		return err
	}
	l.entered = true
	return nil
}

// dropBytes gives back the body's bytes early, once the body is given up.
func (l *lease) dropBytes() {
	l.budget.release(l.client, l.bytes)
	l.bytes = 0
}

func (l *lease) release() {
	l.dropBytes()
	if l.entered {
		l.budget.leave(l.client)
		l.entered = false
	}
}

// readAll reads src into a buffer that grows as bytes arrive, reserving
// each growth from the budget first, so a body holds at most twice what
// its client has sent. declared (Content-Length, -1 when unknown) caps the
// growth but never sizes an allocation on its own; limit bounds the body.
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
			if err := l.budget.reserve(l.client, l.bytes, next-size); err != nil {
				return nil, err
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
	// bufio likewise gives up on a reader that makes no progress.
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
