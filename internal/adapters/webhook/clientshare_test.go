package webhook

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"
)

// A client is its address, whatever its port and however the address is
// spelt, so that one Pod's connections share one share.
func TestClientAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		addr string
		want netip.Addr
	}{
		{name: "IPv4", addr: (&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 4000}).String(), want: clientA},
		{name: "IPv4 on another port", addr: (&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 4001}).String(), want: clientA},
		{name: "IPv4 mapped into IPv6", addr: "[::ffff:10.0.0.1]:4000", want: clientA},
		{name: "IPv6", addr: (&net.TCPAddr{IP: net.ParseIP("2001:db8::4"), Port: 4000}).String(), want: clientD},
		{name: "another kind of address", addr: (&net.UnixAddr{Name: "/run/sock", Net: "unix"}).String(), want: netip.Addr{}},
		{name: "none", addr: "", want: netip.Addr{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, clientAddr(tt.addr))
		})
	}
}

// Each address may open handshakeBurst connections at once, then
// handshakeRate a second, whatever other addresses do; an address whose
// bucket has filled again is forgotten.
func TestHandshakesPerAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		elapsed time.Duration // after the first burst
		want    int           // handshakes client A may then start at once
	}{
		{name: "none at once", elapsed: 0, want: 0},
		{name: "the rate", elapsed: time.Second, want: handshakeRate},
		{name: "part of a second", elapsed: 250 * time.Millisecond, want: handshakeRate / 4},
		{name: "never more than the burst", elapsed: time.Minute, want: handshakeBurst},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := testingclock.NewFakeClock(time.Now())
			h := newHandshakes(clock)
			assert.Equal(t, handshakeBurst, allowed(h, clientA), "the first burst")
			assert.Equal(t, handshakeBurst, allowed(h, clientB), "another address has its own")
			clock.Step(tt.elapsed)
			assert.Equal(t, tt.want, allowed(h, clientA))
		})
	}
}

func TestHandshakesForgetFullBuckets(t *testing.T) {
	t.Parallel()
	clock := testingclock.NewFakeClock(time.Now())
	h := newHandshakes(clock)
	require.True(t, h.allow(clientA))
	assert.Len(t, h.buckets.Keys(), 1)
	clock.Step(time.Duration(handshakeBurst)*time.Second/handshakeRate + time.Millisecond)
	assert.Empty(t, h.buckets.Keys(), "a bucket that has filled again is forgotten")
	for i := range 2 * handshakeAddresses {
		require.True(t, h.allow(netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)})))
	}
	assert.Len(t, h.buckets.Keys(), handshakeAddresses, "no more addresses than the bound are remembered")
}

// allowed counts the handshakes h lets client start now.
func allowed(h *handshakes, client netip.Addr) int {
	n := 0
	for h.allow(client) {
		n++
	}
	return n
}
