package passwords_test

import (
	"testing"

	"github.com/stacks-ils/stacks/passwords"
)

// TestAddrKey: attempts and connections count against the client's IPv4
// address, an IPv6 client against its /64, with or without a port, so that one
// machine cannot get a fresh budget by taking another address of its network.
func TestAddrKey(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1:40000", "127.0.0.1"},
		{"::ffff:10.0.0.5", "10.0.0.5"},
		{"[::ffff:10.0.0.5]:1", "10.0.0.5"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::7]:443", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"::1", "::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"", ""},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := passwords.AddrKey(tt.addr); got != tt.want {
			t.Errorf("AddrKey(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
