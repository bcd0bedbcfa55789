package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
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
	errTooManyConns    = errors.New("every connection of the webhook server is taken")
	errConnShareTaken  = fmt.Errorf("%w that this client address may hold", errTooManyConns)
	errEvicted         = errors.New("given up to make room for a client address below its fair share")
	errTooLarge        = errors.New("request body too large")
)

// item is one of the things the budget shares out among client
// addresses.
type item int

const (
	connections item = iota // open connections
	requests                // requests being read or served
	largeBytes              // body bytes past each body's first smallBodyBytes
	bodyBytes               // all body bytes
	itemCount
)

// itemNames are the values of the label resource of
// operator_webhook_connections_evicted_total.
var itemNames = [itemCount]string{"connections", "requests", "body_bytes", "body_bytes"}

// amounts are how much of each resource something holds or needs.
type amounts [itemCount]int64

// shareErrors and fullErrors say why a need was refused: its client
// address holds its fair share, or the server is full and nothing could
// be given up.
var (
	shareErrors = [itemCount]error{errConnShareTaken, errShareTaken, errShareSpent, errShareSpent}
	fullErrors  = [itemCount]error{errTooManyConns, errTooManyRequests, errOverBudget, errOverBudget}
)

// budget bounds what clients hold at once: open connections, requests
// being read or served, and the bytes of their bodies' buffers. What it
// cannot give is refused at once, so a flood is answered rather than
// queued.
//
// The first smallBodyBytes of each body may use all of the bytes, the
// rest of a body only the large part: the difference is a reserve (up to
// half the budget) that keeps large bodies, hostile ones included, from
// starving the small reviews that are nearly all the API server sends.
//
// Each resource is shared max-min fairly among the client addresses that
// hold some of it, as the API server's own fair queuing shares its seats:
// while there is room anyone takes it, and when the server is full an
// address below its fair share (the capacity divided among the holders,
// itself counted) takes room from the largest holder, whose slowest
// connection (one without a request first, then the one whose request
// has read its body for longest, then its oldest) is given up and reset.
// An address at or above its share is refused; a new connection of its
// replaces instead its own oldest that has carried requests and carries
// none now, if it has one. A fixed share per address
// would be beaten by as many addresses as its fraction allows; a share of
// the active ones is not, until there are more addresses than slots.
type budget struct {
	limit   amounts
	gauge   prometheus.Gauge              // body bytes in flight
	evicted [itemCount]prometheus.Counter // connections given up, by the resource needed

	mu      sync.Mutex
	used    amounts                   // guarded by mu
	holders [itemCount]int64          // guarded by mu; addresses holding some of each
	clients map[netip.Addr]*clientUse // guarded by mu; only addresses that hold something
	age     uint64                    // guarded by mu; orders connections and requests
}

// clientUse is what one client address holds.
type clientUse struct {
	held    amounts
	conns   []*shareConn // oldest first
	tickets []*lease     // requests that hold a slot, oldest first
}

// newBudget shares maxBytes of bodies, maxRequests requests and as many
// connections: over HTTP/1.1 no more requests could be served at once,
// and a connection past them is refused at accept, before it costs a TLS
// handshake, rather than after, with 429. evicted counts the connections
// given up, by label resource.
func newBudget(maxBytes int64, maxRequests int, gauge prometheus.Gauge, evicted *prometheus.CounterVec) *budget {
	reserve := min(int64(maxRequests)*smallBodyBytes, maxBytes/2)
	b := &budget{
		limit: amounts{
			connections: int64(maxRequests),
			requests:    int64(maxRequests),
			largeBytes:  maxBytes - reserve,
			bodyBytes:   maxBytes,
		},
		gauge:   gauge,
		clients: map[netip.Addr]*clientUse{},
	}
	for r := range itemCount {
		b.evicted[r] = evicted.WithLabelValues(itemNames[r])
	}
	return b
}

// maxBody is the largest body the budget could ever hold, were its client
// alone.
func (b *budget) maxBody() int64 {
	return min(b.limit[bodyBytes], b.limit[largeBytes]+smallBodyBytes)
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
	if u.held == (amounts{}) {
		delete(b.clients, client)
	}
}

// change adds d of r to what u holds; b.mu must be held.
func (b *budget) change(u *clientUse, r item, d int64) {
	before := u.held[r]
	u.held[r] += d
	b.used[r] += d
	switch {
	case before == 0 && u.held[r] != 0:
		b.holders[r]++
	case before != 0 && u.held[r] == 0:
		b.holders[r]--
	}
	if r == bodyBytes {
		b.gauge.Set(float64(b.used[bodyBytes]))
	}
}

// belowShare tells whether u may hold n more of r when the server is
// full of it: whether it stays within the capacity divided among the
// addresses that hold some, u counted. b.mu must be held.
func (b *budget) belowShare(u *clientUse, r item, n int64) bool {
	active := b.holders[r]
	if u.held[r] == 0 {
		active++
	}
	return (u.held[r]+n)*active <= b.limit[r]
}

// makeRoom finds room for client's need, giving up connections of the
// largest holders when the server is full and client is below its share.
// It returns the connections given up, to be reset once b.mu is released,
// also when it fails. b.mu must be held.
func (b *budget) makeRoom(client netip.Addr, u *clientUse, need amounts) ([]*shareConn, error) {
	// Refused before anything is given up for it, but a new connection
	// of an address at its share replaces the address's own oldest that
	// has carried requests and carries none now: a client that dials
	// holds no idle connection it means to use, and one it closed may
	// not have been read to its end yet (under load the accept loop can
	// run before the reads that would see the API server's closes). A
	// connection yet to carry its first request is about to.
	for r, n := range need {
		if n > 0 && b.used[r]+n > b.limit[r] && !b.belowShare(u, item(r), n) {
			if item(r) == connections {
				if c := u.idleConn(true); c != nil {
					b.evict(c, connections)
					return []*shareConn{c}, nil
				}
			}
			return nil, shareErrors[r]
		}
	}
	var victims []*shareConn
	for r, n := range need {
		for n > 0 && b.used[r]+n > b.limit[r] {
			v := b.victim(client, item(r))
			if v == nil {
				return victims, fullErrors[r]
			}
			b.evict(v, item(r))
			victims = append(victims, v)
		}
	}
	return victims, nil
}

// victim is the connection to give up so that client may have more of r:
// the slowest of the address that holds the most of r above its share
// (ties go to the older connection), nil when there is none. b.mu must be
// held.
func (b *budget) victim(client netip.Addr, r item) *shareConn {
	var (
		best     *shareConn
		bestHeld int64
		bestAge  uint64
	)
	active := b.holders[r]
	if u := b.clients[client]; u == nil || u.held[r] == 0 {
		active++
	}
	share := b.limit[r] / active
	for addr, u := range b.clients {
		if addr == client || u.held[r] <= share || u.held[r] < bestHeld {
			continue
		}
		c, age := u.slowest(r)
		if c != nil && (u.held[r] > bestHeld || age < bestAge) {
			best, bestHeld, bestAge = c, u.held[r], age
		}
	}
	return best
}

// idleConn is u's oldest connection that carries no request, and with
// spent one that has carried some before; nil when there is none.
func (u *clientUse) idleConn(spent bool) *shareConn {
	for _, c := range u.conns {
		if c.requests == 0 && (c.carried || !spent) {
			return c
		}
	}
	return nil
}

// slowest is the connection of u to give up for r, and its age: for a
// connection, one that carries no request (a handshake, a client yet to
// send, an idle keep-alive); else, and for the other items, the one
// whose request holding r is still reading its body and began first;
// else the oldest that holds r. Requests served without the listener
// have no connection and cannot be given up.
func (u *clientUse) slowest(r item) (*shareConn, uint64) {
	if r == connections {
		if c := u.idleConn(false); c != nil {
			return c, c.age
		}
		r = requests
	}
	for _, reading := range []bool{true, false} {
		for _, t := range u.tickets {
			if t.conn != nil && t.held[r] > 0 && (t.reading || !reading) {
				return t.conn, t.age
			}
		}
	}
	return nil, 0
}

// evict gives up c, needed for r: its connection and every request it
// carries are taken back at once. The caller resets it once b.mu is
// released. b.mu must be held.
func (b *budget) evict(c *shareConn, r item) {
	u := b.use(c.client)
	c.evicted = true
	b.dropConn(u, c)
	u.tickets = slices.DeleteFunc(u.tickets, func(t *lease) bool {
		if t.conn != c {
			return false
		}
		t.evicted = true
		b.giveBack(u, t)
		if t.onEvict != nil {
			t.onEvict.Inc()
		}
		return true
	})
	b.evicted[r].Inc()
	b.forget(c.client, u)
}

// dropConn gives back c's connection once; b.mu must be held.
func (b *budget) dropConn(u *clientUse, c *shareConn) {
	if c.released {
		return
	}
	c.released = true
	u.conns = slices.DeleteFunc(u.conns, func(o *shareConn) bool { return o == c })
	b.change(u, connections, -1)
}

// giveBack returns everything request t holds, leaving it in u.tickets;
// b.mu must be held.
func (b *budget) giveBack(u *clientUse, t *lease) {
	for r, n := range t.held {
		if n != 0 {
			b.change(u, item(r), -n)
		}
	}
	if t.held[requests] > 0 && t.conn != nil {
		t.conn.requests--
	}
	t.held = amounts{}
}

// resetAll resets the connections given up, outside b.mu.
func resetAll(victims []*shareConn) {
	for _, c := range victims {
		c.reset()
	}
}

// connect counts a new connection, giving up another address's when the
// server is full and c's address holds less than its share, or its own
// that has carried requests and carries none when it holds its share; it
// fails with errConnShareTaken or errTooManyConns.
func (b *budget) connect(c *shareConn) error {
	b.mu.Lock()
	victims, err := b.makeRoom(c.client, b.use(c.client), amounts{connections: 1})
	// Giving up the address's own last connection forgot it.
	u := b.use(c.client)
	if err == nil {
		b.age++
		c.age = b.age
		u.conns = append(u.conns, c)
		b.change(u, connections, 1)
	}
	b.forget(c.client, u)
	b.mu.Unlock()
	resetAll(victims)
	return err
}

// disconnect gives back a connection that closed.
func (b *budget) disconnect(c *shareConn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.use(c.client)
	b.dropConn(u, c)
	b.forget(c.client, u)
}

// enter takes a request slot for t, as connect takes a connection; it
// fails with errShareTaken, errTooManyRequests, or errEvicted when t's
// connection was given up.
func (b *budget) enter(t *lease) error {
	b.mu.Lock()
	if t.held[requests] > 0 {
		b.mu.Unlock()
		return nil
	}
	if !t.evicted && t.conn != nil && t.conn.evicted {
		// Its connection was given up while it sent its head.
		t.evicted = true
		if t.onEvict != nil {
			t.onEvict.Inc()
		}
	}
	if t.evicted {
		b.mu.Unlock()
		return errEvicted
	}
	u := b.use(t.client)
	victims, err := b.makeRoom(t.client, u, amounts{requests: 1})
	if err == nil {
		b.age++
		t.age, t.reading = b.age, true
		t.held[requests] = 1
		u.tickets = append(u.tickets, t)
		b.change(u, requests, 1)
		if t.conn != nil {
			t.conn.requests++
			t.conn.carried = true
		}
	}
	b.forget(t.client, u)
	b.mu.Unlock()
	resetAll(victims)
	return err
}

// reserve takes n more bytes for t's body: errShareSpent when its client
// address holds its share of them, errOverBudget when nothing could be
// given up, errEvicted when t was given up itself.
func (b *budget) reserve(t *lease, n int64) error {
	b.mu.Lock()
	if t.evicted {
		b.mu.Unlock()
		return errEvicted
	}
	large := largePart(t.held[bodyBytes]+n) - largePart(t.held[bodyBytes])
	u := b.use(t.client)
	victims, err := b.makeRoom(t.client, u, amounts{largeBytes: large, bodyBytes: n})
	if err == nil {
		t.held[largeBytes] += large
		t.held[bodyBytes] += n
		b.change(u, largeBytes, large)
		b.change(u, bodyBytes, n)
	}
	b.forget(t.client, u)
	b.mu.Unlock()
	resetAll(victims)
	return err
}

// bodyRead marks t's body as read: its request is served now, and is not
// the first of its address's to be given up.
func (b *budget) bodyRead(t *lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t.reading = false
}

// dropBytes gives back t's body bytes early, once the body is given up.
func (b *budget) dropBytes(t *lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.held[bodyBytes] == 0 {
		return
	}
	u := b.use(t.client)
	b.change(u, largeBytes, -t.held[largeBytes])
	b.change(u, bodyBytes, -t.held[bodyBytes])
	t.held[largeBytes], t.held[bodyBytes] = 0, 0
	b.forget(t.client, u)
}

// release gives back everything t holds; a second call, or one after t
// was given up, gives back nothing.
func (b *budget) release(t *lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.held == (amounts{}) {
		return
	}
	u := b.use(t.client)
	b.giveBack(u, t)
	u.tickets = slices.DeleteFunc(u.tickets, func(o *lease) bool { return o == t })
	b.forget(t.client, u)
}

// wasEvicted tells whether t was given up for another address.
func (b *budget) wasEvicted(t *lease) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return t.evicted || (t.conn != nil && t.conn.evicted)
}

// A lease is one request's share of the budget: its slot once it entered,
// and its body's bytes. It is released when the handler returns, not when
// the body is read: the decoded review lives as long as the request.
type lease struct {
	budget  *budget
	client  netip.Addr
	conn    *shareConn         // nil when served without the listener
	onEvict prometheus.Counter // counts the request if it is given up

	// Guarded by budget.mu: another request's need may give this one up.
	held    amounts
	age     uint64
	reading bool
	evicted bool
}

// enter takes a request slot, or fails as budget.enter does.
func (l *lease) enter() error { return l.budget.enter(l) }

// dropBytes gives back the body's bytes early, once the body is given up.
func (l *lease) dropBytes() { l.budget.dropBytes(l) }

func (l *lease) release() { l.budget.release(l) }

// wasEvicted tells whether the request was given up for another address.
func (l *lease) wasEvicted() bool { return l.budget.wasEvicted(l) }

// readAll reads src into a buffer that grows as bytes arrive, reserving
// each growth from the budget first, so a body holds at most twice what
// its client has sent. declared (Content-Length, -1 when unknown) caps the
// growth but never sizes an allocation on its own; limit bounds the body.
func (l *lease) readAll(src io.Reader, declared, limit int64) ([]byte, error) {
	defer l.budget.bodyRead(l)
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
			if err := l.budget.reserve(l, next-size); err != nil {
				return nil, err
			}
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
