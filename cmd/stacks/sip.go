package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/sip"
)

// sipFlags are serve's SIP2 flags.
type sipFlags struct {
	addr            string
	sortBins        string
	idleTimeout     time.Duration
	loginTimeout    time.Duration
	maxConnsPerAddr int
	currency        string
	// tlsAddr, tlsCert and tlsKey are SIP2 over TLS: a second listener, beside or
	// instead of the plain one.
	tlsAddr, tlsCert, tlsKey string
	// tls is the loaded TLS configuration (loadTLS), nil while TLS is off or not
	// yet loaded.
	tls *tls.Config
}

// registerSIPFlags adds the SIP2 flags to serve's flag set.
func registerSIPFlags(fs *flag.FlagSet) *sipFlags {
	f := &sipFlags{}
	fs.StringVar(&f.addr, "sip-addr", env("STACKS_SIP_ADDR", ""),
		"serve SIP2 for self-check machines and sorters on this address, e.g. :6001; off when empty (STACKS_SIP_ADDR)")
	fs.StringVar(&f.sortBins, "sip-sort-bins", env("STACKS_SIP_SORT_BINS", ""),
		"sorter bins by checkin outcome (shelf, hold, remote-hold, transfer, exception), e.g. hold=1,transfer=2,shelf=3 (STACKS_SIP_SORT_BINS)")
	fs.DurationVar(&f.idleTimeout, "sip-idle-timeout", envDuration("STACKS_SIP_IDLE_TIMEOUT", 5*time.Minute),
		"close a SIP2 connection after this long without a message (STACKS_SIP_IDLE_TIMEOUT)")
	fs.DurationVar(&f.loginTimeout, "sip-login-timeout", envDuration("STACKS_SIP_LOGIN_TIMEOUT", 30*time.Second),
		"close a SIP2 connection that has not logged in (93) this long after it opened; messages do not extend it (STACKS_SIP_LOGIN_TIMEOUT)")
	fs.IntVar(&f.maxConnsPerAddr, "sip-max-conns-per-addr", envInt("STACKS_SIP_MAX_CONNS_PER_ADDR", 16),
		"refuse SIP2 connections beyond this many open from one address (an IPv6 /64), loopback included: raise it when terminals come through a tunnel on this host (STACKS_SIP_MAX_CONNS_PER_ADDR)")
	fs.StringVar(&f.currency, "sip-currency", env("STACKS_SIP_CURRENCY", "USD"),
		"ISO 4217 currency code SIP2 sends with amounts (STACKS_SIP_CURRENCY)")
	fs.StringVar(&f.tlsAddr, "sip-tls-addr", env("STACKS_SIP_TLS_ADDR", ""),
		"serve SIP2 over TLS on this address too, e.g. :6002, with --sip-tls-cert and --sip-tls-key; --sip-addr stays plain TCP (leave it empty for TLS only); off when empty (STACKS_SIP_TLS_ADDR)")
	fs.StringVar(&f.tlsCert, "sip-tls-cert", env("STACKS_SIP_TLS_CERT", ""),
		"PEM certificate for --sip-tls-addr, its chain after it; read at start (STACKS_SIP_TLS_CERT)")
	fs.StringVar(&f.tlsKey, "sip-tls-key", env("STACKS_SIP_TLS_KEY", ""),
		"PEM private key of --sip-tls-cert (STACKS_SIP_TLS_KEY)")
	return f
}

// loadTLS checks the TLS flags together and loads the certificate, so that serve
// can refuse a certificate it cannot use before it opens the database; SIP2 over
// TLS is off when it leaves f.tls nil.
func (f *sipFlags) loadTLS() error {
	if f.tls != nil {
		return nil
	}
	var err error
	f.tls, err = f.tlsConfig()
	return err
}

// tlsConfig checks the TLS flags together and loads the certificate; it returns nil
// when SIP2 over TLS is off. A certificate without --sip-tls-addr is refused rather
// than served on --sip-addr: a site that asked for TLS must not find its terminals'
// passwords going in the clear on the port they already use.
func (f *sipFlags) tlsConfig() (*tls.Config, error) {
	if f.tlsAddr == "" && f.tlsCert == "" && f.tlsKey == "" {
		return nil, nil
	}
	if f.tlsCert == "" || f.tlsKey == "" {
		return nil, usageError{"SIP2 over TLS needs both --sip-tls-cert and --sip-tls-key (a PEM certificate and its private key)"}
	}
	if f.tlsAddr == "" {
		return nil, usageError{"--sip-tls-cert and --sip-tls-key need --sip-tls-addr, the address SIP2 over TLS listens on, e.g. :6002 " +
			"(--sip-addr stays plain TCP; leave it empty to serve TLS only)"}
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return nil, usageError{fmt.Sprintf("SIP2 over TLS: cannot load --sip-tls-cert %s and --sip-tls-key %s: %v "+
			"(give a PEM certificate, its chain after it, and the PEM private key that belongs to it)", f.tlsCert, f.tlsKey, err)}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// startSIP starts the SIP2 listeners whose addresses are set (plain TCP, TLS, or
// both, served by one server with one set of limits), and returns the function that
// stops them: it lets each terminal's message in progress finish.
func startSIP(ctx context.Context, f *sipFlags, d *db.DB, logger *slog.Logger, m *metrics.Metrics) (stop func(), err error) {
	if err := f.loadTLS(); err != nil {
		return nil, err
	}
	tlsCfg := f.tls
	if f.addr == "" && tlsCfg == nil {
		return func() {}, nil
	}
	bins, err := sip.ParseSortBins(f.sortBins)
	if err != nil {
		return nil, usageError{"--sip-sort-bins: " + err.Error()}
	}
	if len(f.currency) != 3 {
		return nil, usageError{fmt.Sprintf("--sip-currency %q: use a three-letter ISO 4217 code such as USD or EUR", f.currency)}
	}
	// Zero is the sip package's default (30 s, 16 connections); there is no "off".
	if f.loginTimeout < 0 {
		return nil, usageError{fmt.Sprintf("--sip-login-timeout %v: give a positive duration, e.g. 30s", f.loginTimeout)}
	}
	if f.maxConnsPerAddr < 0 {
		return nil, usageError{fmt.Sprintf("--sip-max-conns-per-addr %d: give a positive number, e.g. 16", f.maxConnsPerAddr)}
	}
	var (
		lc  net.ListenConfig
		lns []net.Listener
		// where is the start-up log's account of the listeners.
		where []any
	)
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	if f.addr != "" {
		ln, err := lc.Listen(ctx, "tcp", f.addr)
		if err != nil {
			return nil, fmt.Errorf("SIP2: listen on %s: %w (is another server running there? choose another with --sip-addr)", f.addr, err)
		}
		lns = append(lns, ln)
		where = append(where, "addr", ln.Addr().String())
	}
	if tlsCfg != nil {
		ln, err := lc.Listen(ctx, "tcp", f.tlsAddr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("SIP2 over TLS: listen on %s: %w (is another server running there? choose another with --sip-tls-addr)", f.tlsAddr, err)
		}
		lns = append(lns, tls.NewListener(ln, tlsCfg))
		where = append(where, "tls_addr", ln.Addr().String(), "tls_cert", f.tlsCert)
		if leaf := tlsCfg.Certificates[0].Leaf; leaf != nil {
			where = append(where, "tls_cert_expires", leaf.NotAfter.Format(time.DateOnly))
			if time.Now().After(leaf.NotAfter) {
				logger.Warn("the SIP2 TLS certificate has expired: terminals that check it will not connect", "tls_cert", f.tlsCert, "expired", leaf.NotAfter)
			}
		}
	}
	cfg := sip.Config{DB: d, Logger: logger, IdleTimeout: f.idleTimeout, LoginTimeout: f.loginTimeout,
		MaxConnsPerAddr: f.maxConnsPerAddr, SortBins: bins, Currency: strings.ToUpper(f.currency)}
	if m != nil {
		cfg.Observe = sipObserver(m)
	}
	srv := sip.New(cfg)
	logger.Info("serving SIP2", append(where, "sort_bins", bins.String(), "idle_timeout", f.idleTimeout,
		"login_timeout", f.loginTimeout, "max_conns_per_addr", f.maxConnsPerAddr)...)
	var served sync.WaitGroup
	for _, ln := range lns {
		served.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, sip.ErrServerClosed) {
				logger.Error("SIP2 server stopped", "addr", ln.Addr().String(), "err", err)
			}
		})
	}
	return func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			logger.Warn("SIP2 shutdown", "err", err)
		}
		served.Wait()
	}, nil
}

func runSIPClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sip-client", "sip-client [flags] MESSAGE...",
		`Connects to a SIP2 server, logs in, sends each MESSAGE in turn and prints every
request (>) and response (<), as the SIP emulators of other library systems do.
Passwords and PINs are starred out in what is printed.

A MESSAGE is a raw SIP2 message (it starts with two digits; the sequence number
and checksum are added with --checksum), or one of:
  status                              SC status (99)
  patron-status:CARD[:PIN]            patron status (23)
  patron-info:CARD[:PIN[:LIST]]       patron information (63); LIST is holds,
                                      overdue, charged, fines, recall or unavailable
  checkout:CARD:BARCODE[:PIN]         checkout (11)
  checkin:BARCODE                     checkin (09)
  item:BARCODE                        item information (17)
  renew:CARD:BARCODE[:PIN]            renew (29)
  renew-all:CARD[:PIN]                renew all (65)
  hold:CARD:BARCODE[:BRANCH]          place a hold (15 +)
  hold-cancel:CARD:BARCODE            cancel a hold (15 -)
  pay:CARD:AMOUNT                     fee paid (37), e.g. pay:P0002:5.00
  end:CARD                            end patron session (35)
  resend                              ask for the last response again (97)

Example:
  stacks sip-client --addr 127.0.0.1:6001 --user kiosk --password kiosk \
      patron-status:P0001:1234 checkout:P0001:I00001 checkin:I00001

Over TLS (stacks serve --sip-tls-addr), trusting a site's own certificate:
  stacks sip-client --addr sip.example.org:6002 --tls-ca site.pem --user kiosk \
      --password kiosk status`, stderr)
	addr := fs.String("addr", env("STACKS_SIP_CLIENT_ADDR", "127.0.0.1:6001"), "SIP2 server address (STACKS_SIP_CLIENT_ADDR)")
	user := fs.String("user", env("STACKS_SIP_USER", ""), "SIP account username (STACKS_SIP_USER)")
	// No default from the environment: --help and usage errors print defaults.
	password := fs.String("password", "", "SIP account password (STACKS_SIP_PASSWORD)")
	institution := fs.String("institution", env("STACKS_SIP_INSTITUTION", ""), "institution ID sent as AO (STACKS_SIP_INSTITUTION)")
	location := fs.String("location", "", "location code sent with the login (CP)")
	checksum := fs.Bool("checksum", false, "use error detection: sequence numbers and checksums (AY, AZ)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for each response")
	useTLS := fs.Bool("tls", false, "connect over TLS (a listener of stacks serve --sip-tls-addr), checking the server's certificate against the system's roots")
	tlsCA := fs.String("tls-ca", "", "trust the CA certificates (PEM) in this file, e.g. a site's self-signed certificate; implies --tls")
	tlsInsecure := fs.Bool("tls-insecure", false, "do not check the server's certificate (for a quick test only: anyone in between could read the password); implies --tls")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tlsCfg, err := clientTLSConfig(*useTLS, *tlsCA, *tlsInsecure)
	if err != nil {
		return err
	}
	if *password == "" {
		*password = os.Getenv("STACKS_SIP_PASSWORD")
	}
	if *user == "" || *password == "" {
		return usageError{"sip-client needs --user and --password (a SIP account, e.g. kiosk / kiosk in the demo)"}
	}
	now := time.Now()
	msgs := make([]string, 0, fs.NArg())
	for _, a := range fs.Args() {
		m, err := namedMessage(a, *institution, now)
		if err != nil {
			return usageError{err.Error()}
		}
		msgs = append(msgs, m)
	}

	dialCtx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var c *sip.Client
	if tlsCfg != nil {
		c, err = sip.DialTLS(dialCtx, *addr, tlsCfg)
	} else {
		c, err = sip.Dial(dialCtx, *addr)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	c.ErrorDetection, c.Timeout = *checksum, *timeout

	exchange := func(msg string) (string, error) {
		sent, resp, err := c.Exchange(msg)
		fmt.Fprintf(stdout, "> %s\n", sip.Redact([]byte(sent)))
		if resp != "" {
			fmt.Fprintf(stdout, "< %s\n", resp)
		}
		return resp, err
	}
	resp, err := exchange(sip.LoginMessage(*user, *password, *location))
	if err != nil {
		return err
	}
	if !strings.HasPrefix(resp, "941") {
		return sip.ErrLoginRefused
	}
	for _, m := range msgs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err := exchange(m); err != nil {
			return err
		}
	}
	return nil
}

// clientTLSConfig is sip-client's TLS configuration from its flags; nil without TLS.
func clientTLSConfig(useTLS bool, caFile string, insecure bool) (*tls.Config, error) {
	if caFile != "" && insecure {
		return nil, usageError{"give --tls-ca or --tls-insecure, not both"}
	}
	if !useTLS && caFile == "" && !insecure {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, usageError{"--tls-ca: " + err.Error()}
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usageError{fmt.Sprintf("--tls-ca %s: no PEM certificate in the file", caFile)}
		}
	}
	return cfg, nil
}

// namedMessage turns a sip-client MESSAGE argument into a SIP2 message.
func namedMessage(arg, institution string, now time.Time) (string, error) {
	if len(arg) >= 2 && arg[0] >= '0' && arg[0] <= '9' && arg[1] >= '0' && arg[1] <= '9' {
		return arg, nil
	}
	parts := strings.Split(arg, ":")
	name, p := parts[0], parts[1:]
	opt := func(i int) string {
		if i < len(p) {
			return p[i]
		}
		return ""
	}
	// pin returns the AD field, or nothing when no PIN was given.
	pin := func(i int) string {
		if i < len(p) {
			return "AD" + p[i] + "|"
		}
		return ""
	}
	need := func(min, max int, form string) error {
		if len(p) < min || len(p) > max {
			return fmt.Errorf("message %q: write it as %s", arg, form)
		}
		return nil
	}
	date := sip.Date(now)
	ao := "AO" + institution + "|"
	switch name {
	case "status":
		return "9900302.00", need(0, 0, "status")
	case "patron-status":
		return "23001" + date + ao + "AA" + opt(0) + "|AC|" + pin(1), need(1, 2, "patron-status:CARD[:PIN]")
	case "patron-info":
		summary := []byte("          ")
		if list := opt(2); list != "" {
			i := slices.Index([]string{"holds", "overdue", "charged", "fines", "recall", "unavailable"}, list)
			if i < 0 {
				return "", fmt.Errorf("message %q: the list is one of holds, overdue, charged, fines, recall, unavailable", arg)
			}
			summary[i] = 'Y'
		}
		return "63001" + date + string(summary) + ao + "AA" + opt(0) + "|AC|" + pin(1), need(1, 3, "patron-info:CARD[:PIN[:LIST]]")
	case "checkout":
		return "11YN" + date + strings.Repeat(" ", 18) + ao + "AA" + opt(0) + "|AB" + opt(1) + "|AC|" + pin(2), need(2, 3, "checkout:CARD:BARCODE[:PIN]")
	case "checkin":
		return "09N" + date + date + "AP|" + ao + "AB" + opt(0) + "|AC|", need(1, 1, "checkin:BARCODE")
	case "item":
		return "17" + date + ao + "AB" + opt(0) + "|AC|", need(1, 1, "item:BARCODE")
	case "renew":
		return "29NN" + date + strings.Repeat(" ", 18) + ao + "AA" + opt(0) + "|AB" + opt(1) + "|AC|" + pin(2), need(2, 3, "renew:CARD:BARCODE[:PIN]")
	case "renew-all":
		return "65" + date + ao + "AA" + opt(0) + "|AC|" + pin(1), need(1, 2, "renew-all:CARD[:PIN]")
	case "hold":
		bs := ""
		if b := opt(2); b != "" {
			bs = "BS" + b + "|"
		}
		return "15+" + date + bs + "BY2|" + ao + "AA" + opt(0) + "|AB" + opt(1) + "|AC|", need(2, 3, "hold:CARD:BARCODE[:BRANCH]")
	case "hold-cancel":
		return "15-" + date + ao + "AA" + opt(0) + "|AB" + opt(1) + "|AC|", need(2, 2, "hold-cancel:CARD:BARCODE")
	case "pay":
		return "37" + date + "0100USD" + "BV" + opt(1) + "|" + ao + "AA" + opt(0) + "|AC|", need(2, 2, "pay:CARD:AMOUNT")
	case "end":
		return "35" + date + ao + "AA" + opt(0) + "|AC|", need(1, 1, "end:CARD")
	case "resend":
		return "97", need(0, 0, "resend")
	}
	return "", fmt.Errorf("unknown message %q: see stacks sip-client --help for the names, or give a raw SIP2 message", arg)
}

// sipObserver records SIP2 messages in the metrics: latency by message type (the
// codes the server answers, and "other" for the rest), and completed checkouts,
// checkins and renewals (an answer whose ok flag is 1).
func sipObserver(m *metrics.Metrics) func(req, resp []byte, took time.Duration, stats *db.Stats) {
	actions := map[string]string{"11": "checkout", "09": "checkin", "29": "renew"}
	return func(req, resp []byte, took time.Duration, stats *db.Stats) {
		code := sip.MessageLabel(req)
		m.ObserveSIP(code, took, stats)
		if action, ok := actions[code]; ok && len(resp) > 2 && resp[2] == '1' {
			m.Circulation(action, "sip")
		}
	}
}
