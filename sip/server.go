package sip

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/passwords"
)

// Config configures a Server.
type Config struct {
	DB     *db.DB
	Logger *slog.Logger
	// Prefs supplies the preferences (fines limit, time zone, library name). Nil
	// gives the server its own cache. Either way a change an administrator makes,
	// on this server or another on the same database, is in the next message's
	// answer (library.PreferenceCache checks the database's version).
	Prefs *library.PreferenceCache
	// PrefsMaxAge is how long a connection keeps its account's settings before
	// reading them again (default 5 seconds).
	PrefsMaxAge time.Duration
	// IdleTimeout closes a connection that sends nothing for this long (default 5
	// minutes); terminals log in again.
	IdleTimeout time.Duration
	// LoginTimeout is how long a connection may stay open without a successful
	// login (93), counted from when it opened or from a failed login that logged it
	// out (default 30 seconds). Messages sent meanwhile, a resend request (97)
	// included, do not extend it: a stranger cannot hold a connection open.
	LoginTimeout time.Duration
	// CheckWait bounds how long a login or PIN check waits for its turn (other
	// checks of the same account, address or patron, then a slot of the
	// comparison pool) before it is answered as not checked (default 8 seconds,
	// below the 10 s timeout the status answer gives terminals).
	CheckWait time.Duration
	// MaxMessage is the longest message accepted, in bytes (default 4096); a longer
	// one is answered 96 and closes the connection.
	MaxMessage int
	// MaxConns limits the open connections (default 256). When they are all
	// open, a connection from an address with fewer than its share (MaxConns
	// divided by the addresses, at least 2) takes the place of the oldest
	// connection not logged in of the address with the most; otherwise it is
	// closed at once. A connection that logged in is never closed for another.
	MaxConns int
	// MaxConnsPerAddr limits the open connections from one client address (default
	// 16; an IPv6 address counts with its /64), so that one machine cannot take all
	// MaxConns and lock the terminals out. Loopback is an address like any other:
	// terminals that reach the server through a tunnel on this host (stunnel) all
	// come from it, and need it raised.
	MaxConnsPerAddr int
	// SortBins maps checkin outcomes to a sorter's bins (the CL field).
	SortBins SortBins
	// Currency is the ISO 4217 code sent with amounts (BH), default "USD".
	Currency string
	// Observe, if set, is told of every message answered: its request and answer,
	// how long it took and its SQL (metrics use it). The request is the bytes the
	// terminal sent, which need not be text: label it with MessageLabel.
	Observe func(req, resp []byte, took time.Duration, stats *db.Stats)
}

// Limits a connection lives with.
const (
	// maxProtocolErrors consecutive messages that cannot be used (bad checksum,
	// unknown identifier, malformed) close the connection.
	maxProtocolErrors = 5
	// maxLoginFailures failed logins on one connection close it.
	maxLoginFailures = 3
	// maxUnauthenticated messages other than a login before one succeeds close it.
	maxUnauthenticated = 5
	writeTimeout       = 30 * time.Second
	// maxHostLoginsInFlight logins from one address are checked at a time, and one
	// per account and address, and one PIN per patron. Up to maxLoginsWaiting more
	// logins or PINs under each (a library's terminals start together after a
	// restart: the load suite starts 75) wait their turn, then for a slot of the
	// comparison pool, for at most checkWait in all; more are refused at once, not
	// compared: guesses sent in parallel would otherwise all be compared before
	// the first failure is counted. A waiting guess is refused uncompared once the
	// account or PIN locks. checkWait (Config.CheckWait's default) is below the
	// 10 s timeout the status answer (98) gives terminals, so that an answer comes
	// before they send again.
	maxHostLoginsInFlight = 4
	maxLoginsWaiting      = 128
	checkWait             = 8 * time.Second
)

// Server is the SIP2 server: one goroutine per connection, each handling its
// terminal's messages in order, with the desk's circulation service.
type Server struct {
	cfg   Config
	log   *slog.Logger
	circ  *circulation.Service
	prefs *library.PreferenceCache

	// limiter counts logins per account and address (and the account's budget
	// its unknown addresses share) and PINs per patron, and bounds the checks
	// in flight (see maxHostLoginsInFlight): see throttle.go.
	limiter *passwords.Limiter
	// lockouts are the lockouts the limiter's attempts met (see noted).
	lockouts noted

	mu sync.Mutex
	// lns are the listeners Serve accepts on: plain TCP, TLS, or both.
	lns   []net.Listener
	conns map[*conn]struct{}
	// perAddr counts the open connections by client address (addrKey).
	perAddr map[string]int
	// refused counts the connections refused since the last log of them, which
	// is written at most once a second (refusedAt): refusals come as fast as a
	// client can connect.
	refused   int
	refusedAt time.Time

	closing atomic.Bool
	wg      sync.WaitGroup
	nextID  atomic.Uint64
	done    chan struct{}
	// waitOnce starts the one wait for the connections that closes done.
	waitOnce sync.Once
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 4096
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 256
	}
	if cfg.MaxConnsPerAddr <= 0 {
		cfg.MaxConnsPerAddr = 16
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = 30 * time.Second
	}
	if cfg.CheckWait <= 0 {
		cfg.CheckWait = checkWait
	}
	if cfg.PrefsMaxAge <= 0 {
		cfg.PrefsMaxAge = 5 * time.Second
	}
	if cfg.Currency == "" {
		cfg.Currency = "USD"
	}
	s := &Server{cfg: cfg, log: cfg.Logger, prefs: cfg.Prefs, conns: map[*conn]struct{}{}, perAddr: map[string]int{}, done: make(chan struct{}),
		limiter: newLimiter(cfg.CheckWait),
	}
	if s.prefs == nil {
		s.prefs = library.NewPreferenceCache(true)
	}
	s.circ = circulation.NewService(cfg.DB, s.prefs)
	return s
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("sip: server closed")

// Serve accepts connections on ln until Shutdown, serving each in its own goroutine.
// It may be called for several listeners at once (plain TCP and TLS, each in its
// own goroutine): their connections share one set of limits, so the connection
// caps count a terminal's connections on both. On a listener from tls.NewListener,
// each connection completes its handshake within LoginTimeout before its first
// message is read.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	var tempDelay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			// Out of file descriptors and the like: wait and try again, as net/http does.
			if tempDelay == 0 {
				tempDelay = 5 * time.Millisecond
			} else {
				tempDelay = min(2*tempDelay, time.Second)
			}
			s.log.Warn("sip accept", "err", err, "retry_in", tempDelay)
			time.Sleep(tempDelay)
			continue
		}
		tempDelay = 0
		c := &conn{s: s, nc: nc, r: bufio.NewReaderSize(nc, 4096), id: s.nextID.Add(1), remote: nc.RemoteAddr().String(), term: "\r"}
		c.addr = addrKey(c.remote)
		if !s.admit(c) {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// Shutdown stops accepting connections, lets each connection finish the message it
// is handling (a sorter must get the answer to a checkin that was committed), closes
// them, and waits for them until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	var errs []error
	for _, ln := range s.lns {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	now := time.Now()
	for c := range s.conns {
		// Interrupts a connection waiting for its next message; one handling a
		// message sees closing before it reads again.
		c.nc.SetReadDeadline(now)
	}
	s.mu.Unlock()
	// Once: Shutdown may be called again (a second signal, a test's cleanup
	// after a restart), and waits for the same connections.
	s.waitOnce.Do(func() { go func() { s.wg.Wait(); close(s.done) }() })
	select {
	case <-s.done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		return fmt.Errorf("sip shutdown: %w", ctx.Err())
	}
	return errors.Join(errs...)
}

// preferences returns the current preferences (from the cache while the
// database's version has not moved).
func (s *Server) preferences(ctx context.Context) (library.Preferences, error) {
	return s.prefs.Get(ctx, s.cfg.DB)
}

// admit registers a new connection, or refuses it when the server is closing,
// or has MaxConnsPerAddr open from the same address. When MaxConns are open, the
// places are shared: each address's share is MaxConns divided by the number of
// addresses (the new one's included), at least 2, and a newcomer under its share
// takes the place of the oldest connection not logged in of the address with the
// most connections, when that address has at least two more than the newcomer's
// (so that two addresses never take a place from each other in turn). A
// connection that logged in is never closed for another: the terminals keep
// theirs, whoever fills the server.
func (s *Server) admit(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	why := ""
	switch {
	case s.closing.Load():
		return false
	case s.perAddr[c.addr] >= s.cfg.MaxConnsPerAddr:
		why = "too many connections from this address"
	case len(s.conns) >= s.cfg.MaxConns && !s.evictFor(c):
		why = "too many connections"
	default:
		s.conns[c] = struct{}{}
		s.perAddr[c.addr]++
		s.wg.Add(1)
		return true
	}
	s.refused++
	if now := time.Now(); now.Sub(s.refusedAt) >= time.Second {
		s.log.Warn("sip connection refused: "+why, "remote", c.remote, "open", len(s.conns), "from_address", s.perAddr[c.addr],
			"max", s.cfg.MaxConns, "max_per_address", s.cfg.MaxConnsPerAddr, "refused_since_last_logged", s.refused)
		s.refused, s.refusedAt = 0, now
	}
	return false
}

// evictFor makes room for c on a full server (s.mu held): it closes the oldest
// connection not logged in of the address with the most connections, when c's
// address is under its share and that address has at least two more than c's
// (see admit). The connection closed is no longer counted from here on.
func (s *Server) evictFor(c *conn) bool {
	addrs := len(s.perAddr)
	if s.perAddr[c.addr] == 0 {
		addrs++
	}
	mine := s.perAddr[c.addr]
	if mine >= max(2, s.cfg.MaxConns/addrs) {
		return false
	}
	// The oldest connection not logged in of each address.
	oldest := map[string]*conn{}
	for o := range s.conns {
		if o.authed.Load() {
			continue
		}
		if cur := oldest[o.addr]; cur == nil || o.id < cur.id {
			oldest[o.addr] = o
		}
	}
	var victim *conn
	for addr, o := range oldest {
		n := s.perAddr[addr]
		if n < mine+2 {
			continue
		}
		if victim == nil || n > s.perAddr[victim.addr] || n == s.perAddr[victim.addr] && o.id < victim.id {
			victim = o
		}
	}
	if victim == nil {
		return false
	}
	delete(s.conns, victim)
	if s.perAddr[victim.addr]--; s.perAddr[victim.addr] <= 0 {
		delete(s.perAddr, victim.addr)
	}
	victim.evicted = true
	victim.nc.Close()
	s.log.Info("sip: connection not logged in closed for a connection from an address with fewer", "conn", victim.id, "remote", victim.remote,
		"for", c.remote, "from_address", mine, "victim_address_had", s.perAddr[victim.addr]+1)
	return true
}

func (s *Server) remove(c *conn) {
	s.mu.Lock()
	if !c.evicted {
		delete(s.conns, c)
		if s.perAddr[c.addr]--; s.perAddr[c.addr] <= 0 {
			delete(s.perAddr, c.addr)
		}
	}
	s.mu.Unlock()
	s.wg.Done()
}

// addrKey is the address a connection counts against for MaxConnsPerAddr and
// its logins against the login limits: the client's IP address, or for IPv6 its
// /64 (passwords.AddrKey).
func addrKey(remote string) string { return passwords.AddrKey(remote) }

// errTooLong is a message longer than MaxMessage.
var errTooLong = errors.New("message too long")

// conn is one terminal's connection and its session.
type conn struct {
	s      *Server
	nc     net.Conn
	r      *bufio.Reader
	id     uint64
	remote string
	// addr is the address the connection counts against (addrKey).
	addr string
	// authed is whether the connection is logged in (account set), for admit,
	// which never closes such a connection to make room; evicted, whether admit
	// closed it to make room (and stopped counting it), under Server.mu.
	authed  atomic.Bool
	evicted bool
	// loginBy is when a connection that is not logged in is closed; zero while
	// logged in.
	loginBy time.Time

	// account is nil until a login succeeds. It is read again from the database
	// when older than PrefsMaxAge (accountAt), so that an administrator's change
	// of its settings reaches the terminal within seconds; seenAt is when the
	// account's last-seen time was last written for this connection.
	account   *Account
	accountAt time.Time
	seenAt    time.Time
	// term is the line terminator the terminal uses, which its answers get too.
	term      string
	pendingCR bool
	line      []byte
	resp      response
	// last is the last response sent, for a resend request (97); lastBody is
	// its length without its error detection fields (AY, AZ).
	last     []byte
	lastBody int
	// checksums is the checksum of the last message that could be read, ""
	// when it had none: the 96 that answers a message too long to read carries
	// a checksum when the terminal's messages do.
	checksums string

	protocolErrors  int
	loginFailures   int
	unauthenticated int
	// pin is the PIN verified for the patron at the terminal (see checkPIN);
	// verified, the login that succeeded last (see login).
	pin      verifiedPIN
	verified verifiedLogin
}

func (c *conn) serve() {
	defer c.s.remove(c)
	defer c.nc.Close()
	ctx := context.Background()
	c.s.log.Debug("sip connection opened", "conn", c.id, "remote", c.remote)
	reason := "closed by the terminal"
	defer func() { c.s.log.Debug("sip connection closed", "conn", c.id, "remote", c.remote, "reason", reason) }()
	defer func() {
		if p := recover(); p != nil {
			reason = "crashed"
			c.s.log.Error("sip connection crashed; closed it", "conn", c.id, "remote", c.remote, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	if tc, ok := c.nc.(*tls.Conn); ok {
		if err := c.handshake(ctx, tc); err != nil {
			if c.s.closing.Load() {
				reason = "server shutting down"
				return
			}
			reason = "TLS handshake failed"
			c.s.log.Info("sip: TLS handshake failed; connection closed", "conn", c.id, "remote", c.remote, "err", err)
			return
		}
	}
	for {
		c.nc.SetReadDeadline(c.readDeadline(time.Now()))
		if c.s.closing.Load() {
			reason = "server shutting down"
			return
		}
		line, err := c.readMessage()
		if err != nil {
			switch {
			case c.s.closing.Load():
				reason = "server shutting down"
			case errors.Is(err, os.ErrDeadlineExceeded) && c.account == nil && !time.Now().Before(c.loginBy):
				reason = "no login in time"
				c.s.log.Info("sip: no login in time; connection closed", "conn", c.id, "remote", c.remote, "login_timeout", c.s.cfg.LoginTimeout)
			case errors.Is(err, os.ErrDeadlineExceeded):
				reason = "idle timeout"
			case errors.Is(err, errTooLong):
				// The terminal hears why before the connection closes: 96, the
				// answer to a message that could not be read (with a checksum when
				// its messages carry one). Not remembered for a 97: the
				// connection ends here.
				reason = "message too long"
				c.s.log.Warn("sip message too long; answered 96 and closed the connection", "conn", c.id, "remote", c.remote, "max", c.s.cfg.MaxMessage)
				if c.write(c.requestResend(&Message{Checksum: c.checksums})) == nil {
					c.drain()
				}
			case errors.Is(err, io.EOF):
			default:
				reason = err.Error()
			}
			return
		}
		keep := c.handleLogged(ctx, line)
		if !keep {
			reason = "closed by the server"
			return
		}
	}
}

// drain lets an answer written before closing reach the terminal: the rest of a
// message too long to read is still arriving, and closing with bytes unread
// resets the connection, which can throw the answer away on the way. It closes
// the connection's sending side and reads what comes for up to a second (64 KB
// at most).
func (c *conn) drain() {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.nc.SetReadDeadline(time.Now().Add(time.Second))
	io.CopyN(io.Discard, c.r, 64<<10)
}

// handshake completes a TLS connection's handshake before its first message, by
// the time it must have logged in: a client that does not speak TLS (a terminal
// pointed at the wrong port) is closed as soon as its first bytes arrive, and one
// that stalls holds its connection no longer than one that never logs in.
func (c *conn) handshake(ctx context.Context, tc *tls.Conn) error {
	c.loginBy = time.Now().Add(c.s.cfg.LoginTimeout)
	tc.SetDeadline(c.loginBy)
	// After the deadline is set, as in serve's loop: a Shutdown that set its own
	// deadline before this one is not missed.
	if c.s.closing.Load() {
		return ErrServerClosed
	}
	return tc.HandshakeContext(ctx)
}

// readDeadline is when the connection is closed unless a message arrives: after
// IdleTimeout without one, and before a login at loginBy, which no message moves.
func (c *conn) readDeadline(now time.Time) time.Time {
	idle := now.Add(c.s.cfg.IdleTimeout)
	if c.account != nil {
		c.loginBy = time.Time{}
		return idle
	}
	if c.loginBy.IsZero() {
		c.loginBy = now.Add(c.s.cfg.LoginTimeout)
	}
	if c.loginBy.Before(idle) {
		return c.loginBy
	}
	return idle
}

// readMessage reads one message up to its terminator: CR, CR LF, or (leniently) LF.
// Empty lines are skipped.
func (c *conn) readMessage() ([]byte, error) {
	c.line = c.line[:0]
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return nil, err
		}
		switch b {
		case '\r':
			if len(c.line) == 0 {
				continue
			}
			c.term, c.pendingCR = "\r", true
			// The LF of a CR LF has usually arrived with the message.
			if c.r.Buffered() > 0 {
				if next, _ := c.r.Peek(1); len(next) == 1 && next[0] == '\n' {
					c.r.ReadByte()
					c.term, c.pendingCR = "\r\n", false
				}
			}
			return c.line, nil
		case '\n':
			if c.pendingCR {
				c.term, c.pendingCR = "\r\n", false
				continue
			}
			if len(c.line) == 0 {
				continue
			}
			c.term = "\n"
			return c.line, nil
		default:
			c.pendingCR = false
			if len(c.line) >= c.s.cfg.MaxMessage {
				return nil, errTooLong
			}
			c.line = append(c.line, b)
		}
	}
}

// handleLogged handles one message and writes its answer; with debug logging on,
// it also logs the exchange with its timing and SQL statement count. The log
// record is built only then: at info level the hot path does none of it.
func (c *conn) handleLogged(ctx context.Context, line []byte) bool {
	debugOn := c.s.log.Enabled(ctx, slog.LevelDebug)
	observe := c.s.cfg.Observe
	var (
		start time.Time
		stats *db.Stats
	)
	if debugOn || observe != nil {
		start = time.Now()
		ctx, stats = db.WithStats(ctx)
	}
	resp, keep := c.handle(db.WithRequestVersions(ctx), line)
	if observe != nil {
		// Before the answer goes out, so that whoever reads the metrics after
		// seeing the answer finds the message counted.
		observe(line, resp, time.Since(start), stats)
	}
	var werr error
	if resp != nil {
		werr = c.write(resp)
	}
	if c.account != nil && time.Since(c.seenAt) >= lastSeenEvery {
		// After the answer: the terminal does not wait for it.
		c.touch(ctx)
	}
	if debugOn {
		c.logExchange(ctx, line, resp, time.Since(start), stats)
	}
	if werr != nil {
		c.s.log.Debug("sip write failed", "conn", c.id, "remote", c.remote, "err", werr)
		return false
	}
	return keep
}

func (c *conn) write(resp []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	// One write for message and terminator: one packet on the wire.
	resp = append(resp, c.term...)
	_, err := c.nc.Write(resp)
	return err
}

func (c *conn) logExchange(ctx context.Context, req, resp []byte, took time.Duration, stats *db.Stats) {
	account := ""
	if c.account != nil {
		account = c.account.Username
	}
	c.s.log.LogAttrs(ctx, slog.LevelDebug, "sip message",
		slog.Uint64("conn", c.id),
		slog.String("account", account),
		slog.String("request", Redact(req)),
		slog.String("response", string(resp)),
		slog.Duration("took", took),
		slog.Int64("sql", stats.Statements()),
		slog.Duration("db", stats.Duration()),
	)
}

// Redact returns a message for a log, with the values of the password fields (the
// login password CO, the patron's PIN AD, the terminal password AC) starred out.
func Redact(msg []byte) string {
	if len(msg) < 2 {
		return string(msg)
	}
	fixed, _ := fixedLength(string(msg[:2]))
	out := make([]byte, 0, len(msg))
	out = append(out, msg[:min(len(msg), 2+fixed)]...)
	for i := 2 + fixed; i < len(msg); {
		// A field starts here.
		end := i
		for end < len(msg) && msg[end] != '|' {
			end++
		}
		if end-i >= 2 {
			switch string(msg[i : i+2]) {
			case "CO", "AD", "AC":
				out = append(out, msg[i:i+2]...)
				if end-i > 2 {
					out = append(out, "****"...)
				}
				i += end - i
				if i < len(msg) {
					out = append(out, '|')
					i++
				}
				continue
			}
		}
		if end < len(msg) {
			end++
		}
		out = append(out, msg[i:end]...)
		i = end
	}
	return string(out)
}

// handle answers one message. It returns the response (nil for none) and whether the
// connection stays open. A panic while handling is recovered in serve, which closes
// the connection: a bug must not take the server down.
func (c *conn) handle(ctx context.Context, line []byte) ([]byte, bool) {
	m, err := Parse(line)
	unsupported := errors.Is(err, ErrUnknown)
	if err != nil && !unsupported {
		c.protocolErrors++
		if c.protocolErrors >= maxProtocolErrors {
			c.s.log.Warn("sip: too many unusable messages; connection closed", "conn", c.id, "remote", c.remote, "err", err)
			return nil, false
		}
		// At debug level: a terminal on a bad line can send these as fast as it
		// likes, and the fifth in a row is logged above when it closes the
		// connection. The error names the byte that could not be read.
		if c.s.log.Enabled(ctx, slog.LevelDebug) {
			c.s.log.Debug("sip: unusable message; asked for a resend", "conn", c.id, "remote", c.remote, "err", err, "request", Redact(line))
		}
		return c.requestResend(&m), true
	}
	c.protocolErrors = 0
	c.checksums = m.Checksum

	if c.account == nil && m.ID != "93" {
		// A resend request (97) counts too: answered, it would otherwise keep a
		// connection without a login busy for ever.
		c.unauthenticated++
		var resp []byte
		if m.ID == "97" {
			resp = c.resend(&m)
		} else {
			c.resp.start("94")
			c.resp.ok(false)
			resp = c.remember(c.resp.finish(&m))
		}
		if c.unauthenticated >= maxUnauthenticated {
			c.s.log.Warn("sip: messages without a login; connection closed", "conn", c.id, "remote", c.remote)
			return resp, false
		}
		return resp, true
	}
	if m.ID == "97" {
		return c.resend(&m), true
	}
	if unsupported {
		return c.unsupported(&m), true
	}
	if m.ID != "93" {
		if ok := c.refreshAccount(ctx); !ok {
			return nil, false
		}
		if !c.account.Settings.Allows(m.ID) {
			return c.denied(ctx, &m), true
		}
	}

	keep := true
	switch m.ID {
	case "93":
		var answered bool
		if answered, keep = c.login(ctx, &m); !answered {
			return nil, keep
		}
	case "99":
		c.status(ctx, &m)
	case "23":
		c.patronStatus(ctx, &m)
	case "63":
		c.patronInformation(ctx, &m)
	case "11":
		c.checkout(ctx, &m)
	case "09":
		c.checkin(ctx, &m)
	case "17":
		c.itemInformation(ctx, &m)
	case "29":
		c.renew(ctx, &m)
	case "65":
		c.renewAll(ctx, &m)
	case "15":
		c.hold(ctx, &m)
	case "35":
		c.endSession(ctx, &m)
	case "37":
		c.feePaid(ctx, &m)
	case "01":
		c.blockPatron(ctx, &m)
	case "25":
		c.patronEnable(ctx, &m)
	case "19":
		c.itemStatusUpdate(ctx, &m)
	}
	return c.remember(c.resp.finish(&m)), keep
}

// unsupported handles a message that arrived whole (its checksum, if any,
// matched) but whose identifier is not one this server answers: a vendor's
// extension, or a message of a later version of the protocol. It is not answered,
// and the connection stays open.
//
// Why no answer. 96 asks the terminal to send its last message again because it
// arrived damaged (SIP2 2.00: "checksum failure, etc."); this one arrived intact,
// so the terminal would send the same bytes, get 96 again, and loop until it or
// the server gives up (here five unusable messages in a row close the
// connection). Koha's C4/SIP/Sip/MsgType.pm ("No handler defined") answers 96
// all the same, and Evergreen's SIPServer (Sip/MsgType.pm) has no handler to
// call: both start that loop. The 2.00 specification defines no "not supported"
// answer; it has the ACS status (98) tell a terminal which messages the server
// supports (BX), and a terminal that gets no answer waits the timeout the server
// advertised there and retries at most the retries it advertised (here 10 s and
// 3), then goes on. Silence is therefore the one answer that cannot be taken for
// something else and that ends: a well-behaved terminal never sends a message
// BX did not list, and one that does loses a few seconds, not its connection.
// The last response stays as it was, for a resend request (97).
func (c *conn) unsupported(m *Message) []byte {
	c.s.log.Info("sip: unsupported message; not answered", "conn", c.id, "remote", c.remote, "id", m.ID)
	return nil
}

// resend answers 97: the last response again, or 96 when there is none. As Koha
// and Evergreen's SIPServer do, its own sequence number is not repeated: the
// response is sent with the error detection fields of the 97 (SIP2 2.00 gives
// a 97 none but the checksum; a sequence number it carries is echoed) and a
// checksum made anew, when the 97 or the response had one.
func (c *conn) resend(m *Message) []byte {
	if c.last == nil {
		return c.requestResend(m)
	}
	r := &c.resp
	r.b = append(r.b[:0], c.last[:c.lastBody]...)
	if m.Seq >= 0 {
		r.b = append(r.b, 'A', 'Y')
		r.b = strconv.AppendInt(r.b, int64(m.Seq), 10)
	}
	if m.Seq >= 0 || m.Checksum != "" || len(c.last) > c.lastBody {
		r.b = append(r.b, 'A', 'Z')
		r.b = appendChecksum(r.b, r.b)
	}
	return r.b
}

// requestResend is the 96 message: please send your last message again.
func (c *conn) requestResend(m *Message) []byte {
	c.resp.start("96")
	if m.Checksum != "" {
		c.resp.b = append(c.resp.b, 'A', 'Z')
		c.resp.b = appendChecksum(c.resp.b, c.resp.b)
	}
	return c.resp.b
}

// remember keeps a copy of the response, made by c.resp, for a resend request.
func (c *conn) remember(resp []byte) []byte {
	c.last = append(c.last[:0], resp...)
	c.lastBody = min(c.resp.body, len(resp))
	return resp
}

// internalError logs an error of ours; the terminal gets a message sending the
// patron to the desk.
func (c *conn) internalError(ctx context.Context, what string, err error) {
	c.s.log.LogAttrs(ctx, slog.LevelError, "sip "+what, slog.Uint64("conn", c.id), slog.String("remote", c.remote), slog.Any("err", err))
}
