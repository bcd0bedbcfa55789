package webhook

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
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
