package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/opac"
)

// opacFlags are serve's flags for the patrons' catalogue (package opac).
type opacFlags struct {
	addr    string
	baseURL string
	// basePath is --opac-base-path as given; base is it cleaned (config).
	basePath    string
	base        string
	repoID      string
	adminEmail  string
	idleTimeout time.Duration
	// secureCookies marks the patrons' cookie Secure, apart from the staff
	// site's --secure-cookies: the patrons' site may be behind TLS while the
	// staff site is on an internal network, or the reverse.
	secureCookies bool
	// trustedProxies is --opac-trusted-proxy as given: addresses or CIDRs.
	trustedProxies string
	// defaulted: addr was not given but chosen for --demo; failing to listen
	// there is then a warning, not a failure.
	defaulted bool
}

func registerOPACFlags(fs *flag.FlagSet) *opacFlags {
	f := &opacFlags{}
	fs.StringVar(&f.addr, "opac-addr", env("STACKS_OPAC_ADDR", ""),
		"serve the patrons' catalogue and OAI-PMH on this address, e.g. :8081 (off by default; with --demo, the port after --addr's) (STACKS_OPAC_ADDR)")
	fs.StringVar(&f.baseURL, "opac-base-url", env("STACKS_OPAC_BASE_URL", ""),
		"the patrons' catalogue's public address, e.g. https://catalogue.example.org, for permanent links and the OAI-PMH base URL (default: each request's host) (STACKS_OPAC_BASE_URL)")
	fs.StringVar(&f.basePath, "opac-base-path", env("STACKS_OPAC_BASE_PATH", ""),
		"serve the patrons' catalogue under this path, e.g. /catalogue, where a proxy publishes it; other paths answer 404 (STACKS_OPAC_BASE_PATH)")
	fs.StringVar(&f.repoID, "oai-repository-id", env("STACKS_OAI_REPOSITORY_ID", ""),
		"the repository identifier in OAI-PMH identifiers, oai:ID:<record> (default: stacks; it does not follow --opac-base-url; keep it stable once harvested) (STACKS_OAI_REPOSITORY_ID)")
	fs.StringVar(&f.adminEmail, "oai-admin-email", env("STACKS_OAI_ADMIN_EMAIL", ""),
		"the administrator's address OAI-PMH's Identify gives (the protocol requires one) (STACKS_OAI_ADMIN_EMAIL)")
	fs.DurationVar(&f.idleTimeout, "opac-idle-timeout", envDuration("STACKS_OPAC_IDLE_TIMEOUT", opac.DefaultIdleTimeout),
		"sign patrons out after this long without a request (STACKS_OPAC_IDLE_TIMEOUT)")
	fs.BoolVar(&f.secureCookies, "opac-secure-cookies", envBool("STACKS_OPAC_SECURE_COOKIES"),
		"mark the patrons' session cookie Secure: set this when patrons reach the catalogue over HTTPS; --secure-cookies is the staff site's (STACKS_OPAC_SECURE_COOKIES)")
	fs.StringVar(&f.trustedProxies, "opac-trusted-proxy", env("STACKS_OPAC_TRUSTED_PROXY", ""),
		"comma-separated addresses or CIDRs of the proxies in front of the patrons' site, e.g. 127.0.0.1/32; only requests from these are read for the patron's address in X-Forwarded-For (STACKS_OPAC_TRUSTED_PROXY)")
	return f
}

// config returns base with the patrons' site's own settings, or a usage error
// for a --opac-trusted-proxy that is not a list of addresses or CIDRs.
func (f *opacFlags) config(base opac.Config) (opac.Config, error) {
	cfg := base
	cfg.BaseURL, cfg.RepositoryID, cfg.AdminEmail, cfg.IdleTimeout = f.baseURL, f.repoID, f.adminEmail, f.idleTimeout
	cfg.SecureCookies = f.secureCookies
	mount, err := basepath.Clean(f.basePath)
	if err != nil {
		return cfg, usageError{"--opac-base-path: " + err.Error()}
	}
	f.base = mount
	proxies, err := opac.ParseTrustedProxies(f.trustedProxies)
	if err != nil {
		return cfg, usageError{"--opac-trusted-proxy: " + err.Error()}
	}
	cfg.TrustedProxies = proxies
	return cfg, nil
}

// defaults turns the patrons' catalogue on for the demo, on the port after the
// staff site's (:8080 gives :8081), unless --opac-addr or STACKS_OPAC_ADDR said
// otherwise.
func (f *opacFlags) defaults(fs *flag.FlagSet, staffAddr string, demo bool) {
	if !demo || f.addr != "" || env("STACKS_OPAC_ADDR", "") != "" {
		return
	}
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == "opac-addr" })
	if set {
		return
	}
	host, port, err := net.SplitHostPort(staffAddr)
	if err != nil {
		return
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n >= 65535 {
		return
	}
	f.addr, f.defaulted = net.JoinHostPort(host, strconv.Itoa(n+1)), true
}

// startOPAC serves the patrons' catalogue on its own listener with cfg (made by
// opacFlags.config), if an address is set, and returns the function that stops it (draining requests in progress).
func startOPAC(f *opacFlags, cfg opac.Config, readHeaderTimeout time.Duration, logger *slog.Logger) (func(), error) {
	if f.addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		if f.defaulted {
			logger.Warn("patrons' catalogue not served: its demo address is taken; choose one with --opac-addr", "addr", f.addr, "err", err)
			return func() {}, nil
		}
		return nil, fmt.Errorf("listen on %s for the patrons' catalogue: %w (choose another with --opac-addr)", f.addr, err)
	}
	hs := &http.Server{
		Handler:           basepath.Mount(f.base, opac.New(cfg)),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Error("patrons' catalogue stopped", "err", err)
		}
	}()
	site := "http://" + displayAddr(ln.Addr()) + f.base
	logger.Info("serving the patrons' catalogue", "addr", site+"/", "oai", site+"/oai")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}
