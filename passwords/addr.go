package passwords

import "net/netip"

// AddrKey is the address a sign-in attempt or a connection is counted under:
// the client's IPv4 address, or for IPv6 its /64 (one machine is commonly
// given a whole /64, and could otherwise use a new address for every guess).
// addr is an address with or without a port ("10.0.0.5", "[2001:db8::1]:6001");
// an IPv4 address mapped into IPv6 counts as the IPv4 address; what cannot be
// parsed is returned as it is.
func AddrKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return addr
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.WithZone("").Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
