package load

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// CheckLoopback returns an error unless target (a URL such as
// http://127.0.0.1:8080, or a host:port such as [::1]:6001) names this machine
// by a loopback address (127.0.0.0/8, ::1) or as localhost. A load test sends
// hundreds of requests a second: pointed at someone else's server it is a denial
// of service, so the tool refuses before sending anything. Names other than
// localhost are refused without being looked up, since what they resolve to can
// change between the check and the test.
func CheckLoopback(target string) error {
	host, err := targetHost(target)
	if err != nil {
		return err
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("target %q is not this machine: stacks load only runs against a loopback address "+
		"(127.0.0.1, [::1] or localhost), because a load test against another host is a denial of service to "+
		"whoever else uses it; start a server here (stacks serve --addr 127.0.0.1:8080) and point the test at it",
		target)
}

// targetHost extracts the host of a URL or host:port.
func targetHost(target string) (string, error) {
	if strings.Contains(target, "://") {
		u, err := url.Parse(target)
		if err != nil {
			return "", fmt.Errorf("target %q: %w", target, err)
		}
		if u.Scheme != "http" {
			return "", fmt.Errorf("target %q: use an http:// URL (the test talks plain HTTP to a server on this machine)", target)
		}
		if u.Hostname() == "" {
			return "", fmt.Errorf("target %q has no host: write it as http://127.0.0.1:PORT", target)
		}
		return u.Hostname(), nil
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return "", fmt.Errorf("target %q: write it as HOST:PORT, e.g. 127.0.0.1:6001", target)
	}
	if host == "" {
		return "", fmt.Errorf("target %q has no host: write it as 127.0.0.1%s", target, target)
	}
	return host, nil
}
