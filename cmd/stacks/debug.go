package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"time"
)

// startDebug serves Go's pprof profiles on a loopback address, apart from the
// staff site: profiles reveal internals and cost CPU, so they are never public.
func startDebug(addr string, logger *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--debug-addr %q: give host:port, e.g. 127.0.0.1:6060", addr)}
	}
	if ip, err := netip.ParseAddr(host); (err != nil && host != "localhost") || (err == nil && !ip.IsLoopback()) {
		return nil, usageError{fmt.Sprintf("--debug-addr %q: the profiling address must be loopback (127.0.0.1, ::1 or localhost)", addr)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug address %s: %w", addr, err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	logger.Info("profiles", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}

// parsePrefixes reads a comma-separated list of addresses and CIDR prefixes.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix", part)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// envBoolDefault reads a boolean environment variable, def when unset.
func envBoolDefault(name string, def bool) bool {
	switch env(name, "") {
	case "":
		return def
	case "0", "false", "FALSE", "False", "no", "off":
		return false
	}
	return true
}
