package sip

import "testing"

// TestAddrKey: connections count against their client's IP address for
// MaxConnsPerAddr, an IPv6 client against its /64, so that one machine cannot
// escape the limit by using more addresses of its own network.
func TestAddrKey(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"127.0.0.1:40000", "127.0.0.1"},
		{"127.0.0.2:40000", "127.0.0.2"},
		{"10.0.0.5:1", "10.0.0.5"},
		{"[::ffff:10.0.0.5]:1", "10.0.0.5"},
		{"[2001:db8:1:2::1]:6001", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:6001", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:6001", "2001:db8:1:3::/64"},
		{"[::1]:6001", "::/64"},
		{"[fe80::1%eth0]:6001", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := addrKey(tt.remote); got != tt.want {
			t.Errorf("addrKey(%q) = %q, want %q", tt.remote, got, tt.want)
		}
	}
}
