// Package opac serves the patrons' catalogue (the OPAC) and My account on a
// listener of its own: public search and record pages, sign-in with a card
// number and PIN, loans, holds, fines and the PIN, and OAI-PMH for discovery
// layers at /oai.
//
// It is a separate audience from the staff site (package web) with a separate
// threat model, so it has its own router, session cookie and table, and
// Content-Security-Policy, and it imports nothing of package web: no staff route
// can be mounted here by accident (TestNoStaffRoutes proves it). The HTTP
// plumbing both sites share is in package kit, which has no routes. Domain work is
// done by the domain packages, so the desk's rules and messages apply; this
// package words them for patrons.
package opac

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// Config configures a Server.
type Config struct {
	DB     *db.DB
	Logger *slog.Logger
	// AccessLog, if set, logs one line per request.
	AccessLog *slog.Logger
	// IdleTimeout signs a patron out after this long without a request (default
	// 15 minutes: patrons use shared computers in the library).
	IdleTimeout time.Duration
	// SessionLifetime is the absolute lifetime of a sign-in (default 4 h).
	SessionLifetime time.Duration
	// SecureCookies marks the session cookie Secure (set when served over TLS).
	SecureCookies bool
	// TrustedProxies are the proxies in front of the site. A request from one
	// of them is counted, for the sign-in throttle, under the address its
	// X-Forwarded-For names (the last hop that is not a trusted proxy); any other
	// request under its own address, whatever headers it sends. Empty: the
	// header is never read. Behind a proxy without this, every patron shares the
	// proxy's address, and twenty wrong PINs from anyone lock sign-in for all.
	TrustedProxies []netip.Prefix
	// Preferences, if set, is shared with the staff site, so that an
	// administrator's change shows here at once; nil reads them per request.
	Preferences *library.PreferenceCache
	// SearchTimeout bounds each catalogue search (default 2 s).
	SearchTimeout time.Duration
	// BaseURL is the site's address as patrons and harvesters reach it, such as
	// "https://catalogue.example.org", for permanent links and the OAI-PMH base
	// URL; empty: taken from each request.
	BaseURL string
	// RepositoryID is the repository identifier of OAI-PMH identifiers
	// ("oai:<RepositoryID>:<record id>"); empty: DefaultRepositoryID, whatever
	// the BaseURL, so that setting the BaseURL later renames nothing.
	RepositoryID string
	// AdminEmail is the address OAI-PMH's Identify gives for the repository's
	// administrator (the protocol requires one); empty: an address under
	// ".invalid", which a site should replace.
	AdminEmail string
	// OAITimeout bounds each OAI-PMH read of records (default 10 s); a read
	// that runs over, or finds every heavy-read slot taken, is answered 503
	// with Retry-After.
	OAITimeout time.Duration
	// OAIPageSize is how many records a ListRecords page holds (default 100, at
	// most 1000); a ListIdentifiers page holds five times as many.
	OAIPageSize int
}

// Server is the patrons' web application.
type Server struct {
	kit.Site
	DB     *db.DB
	Circ   *circulation.Service
	SignIn *patrons.SignIn

	cfg   Config
	prefs *library.PreferenceCache

	notices noticeChoicesService
	Catalog catalogService
	my      accountServices
}

// Defaults of Config.
const (
	DefaultIdleTimeout     = 15 * time.Minute
	DefaultSessionLifetime = 4 * time.Hour
	DefaultSearchTimeout   = 2 * time.Second
	DefaultOAITimeout      = 10 * time.Second
)

// CookieName is the patrons' session cookie: not the staff site's, so that the
// two sites never read each other's sessions even on one host name.
const CookieName = "stacks_opac"

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	if cfg.OAITimeout <= 0 {
		cfg.OAITimeout = DefaultOAITimeout
	}
	if cfg.OAIPageSize <= 0 || cfg.OAIPageSize > 1000 {
		cfg.OAIPageSize = 100
	}
	prefs := cfg.Preferences
	if prefs == nil {
		prefs = library.NewPreferenceCache(false)
	}
	// A browser session cookie, without Max-Age or Expires: closing the browser
	// on a shared library computer ends the sign-in, whatever the server's
	// lifetime. The idle timeout is a "seen" stamp (loadPatron).
	sm := kit.Sessions{
		DB: cfg.DB, Table: "opac_sessions", Codec: sessionCodec{}, Lifetime: cfg.SessionLifetime,
		Cookie: CookieName, Secure: cfg.SecureCookies, BrowserSession: true, Logger: cfg.Logger,
	}.New()
	circ := circulation.NewService(cfg.DB, prefs)
	s := &Server{
		Site:    kit.Site{Logger: cfg.Logger, Sessions: sm},
		DB:      cfg.DB,
		Circ:    circ,
		my:      newAccountServices(cfg.DB, circ),
		SignIn:  patrons.NewSignIn(cfg.DB),
		cfg:     cfg,
		prefs:   prefs,
		notices: newNoticeChoices(cfg.DB, prefs),
		Catalog: newCatalogService(cfg),
	}
	s.SetHandler(s.Handler)
	return s
}

// Handler builds the router with every route and middleware. Cross-origin form
// posts are refused (Go's CrossOriginProtection, as on the staff site), which
// protects every POST from cross-site request forgery; harvesters and other
// clients that send no browser headers are let through.
func (s *Server) Handler() http.Handler {
	return http.NewCrossOriginProtection().Handler(s.Router())
}

// PublicRoutes are the routes anyone may use without signing in, as "METHOD
// pattern": the catalogue, sign-in, OAI-PMH and the assets. Every other route
// needs a signed-in patron (TestRoutesNeedSession walks the router to prove it).
var PublicRoutes = map[string]bool{
	"GET /healthz":      true,
	"GET /static/*":     true,
	"HEAD /static/*":    true,
	"GET /favicon.ico":  true,
	"GET /oai":          true,
	"POST /oai":         true,
	"GET /":             true,
	"GET /search":       true,
	"GET /records/{id}": true,
	"GET /signin":       true,
	"POST /signin":      true,
	"POST /signout":     true,
}

// Router returns the chi router (exported for tests that walk every route).
func (s *Server) Router() chi.Router {
	r := chi.NewRouter()
	r.Use(kit.Base{Logger: s.Logger, AccessLog: s.cfg.AccessLog, AccessMessage: "opac request", ContentSecurityPolicy: ContentSecurityPolicy}.Middleware()...)
	r.Use(limitBody)

	r.Get("/healthz", kit.Healthz(s.DB, s.Logger))
	r.Get("/static/*", static.Handler().ServeHTTP)
	r.Head("/static/*", static.Handler().ServeHTTP)
	r.Get("/favicon.ico", static.Favicon())
	r.Get("/oai", s.handleOAI)
	r.Post("/oai", s.handleOAI)

	r.Group(func(r chi.Router) {
		r.Use(refuseNUL)
		r.Use(kit.NoStore)
		r.Use(s.loadSession)
		r.Use(s.loadPatron)
		r.Get("/", s.handleHome)
		r.Get("/search", s.handleSearch)
		r.Get("/records/{id}", s.handleRecord)
		r.Get("/signin", s.handleSignInForm)
		r.Post("/signin", s.handleSignIn)
		r.Post("/signout", s.handleSignOut)

		r.Group(func(r chi.Router) {
			r.Use(s.requirePatron)
			r.Get("/records/{id}/hold", s.handlePlaceHoldForm)
			r.Post("/records/{id}/hold", s.handlePlaceHold)
			r.Get("/account", s.handleAccount)
			r.Post("/account/renew", s.handleRenew)
			r.Get("/account/holds/{id}/cancel", s.handleHoldCancel)
			r.Post("/account/holds/{id}/cancel", s.handleHoldCancel)
			r.Post("/account/holds/{id}/suspend", s.handleHoldSuspend)
			r.Post("/account/holds/{id}/resume", s.handleHoldResume)
			r.Post("/account/holds/{id}/pickup", s.handleHoldPickup)
			r.Get("/account/fines", s.handleFines)
			r.Get("/account/pin", s.handlePINForm)
			r.Post("/account/pin", s.handlePINChange)
			r.Get("/account/notices", s.handleNoticesForm)
			r.Post("/account/notices", s.handleNoticesSave)
			r.Post("/account/history", s.handleHistorySave)
		})
		r.NotFound(s.handleNotFound)
		r.MethodNotAllowed(kit.MethodNotAllowed)
	})
	return r
}

// Session keys.
const (
	sessPatronID = "pid"
	sessSeen     = "seen"
	// sessPINGen is the patron's PIN generation at sign-in: a session whose
	// generation is not the patron's (the PIN changed since) is ended.
	sessPINGen = "pg"
	sessFlash  = kit.FlashKey
)

// seenRefresh is how stale the "seen" stamp may get before a request rewrites it.
const seenRefresh = time.Minute

type patronKey struct{}

// patronFrom returns the signed-in patron, or nil.
func patronFrom(ctx context.Context) *patrons.Patron {
	p, _ := ctx.Value(patronKey{}).(*patrons.Patron)
	return p
}

// loadPatron puts the signed-in patron, if any, in the request's context,
// enforcing the idle timeout: one statement for a signed-in patron, none for
// anyone else.
func (s *Server) loadPatron(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		pid := s.Sessions.GetInt64(ctx, sessPatronID)
		if pid == 0 {
			next.ServeHTTP(w, r)
			return
		}
		now := s.DB.Now()
		seen := time.Unix(s.Sessions.GetInt64(ctx, sessSeen), 0)
		if now.Sub(seen) > s.cfg.IdleTimeout {
			if err := s.Sessions.Destroy(ctx); err != nil {
				s.Error(w, r, err)
				return
			}
			if !(r.Method == http.MethodPost && r.URL.Path == "/signin") {
				s.Flash(r, "info", "You were signed out after a while without activity. Please sign in again.")
			}
			next.ServeHTTP(w, r)
			return
		}
		p, err := s.my.patrons.SessionPatron(ctx, pid)
		stale := err == nil && s.Sessions.GetInt64(ctx, sessPINGen) != p.PINGeneration
		if stacks.ErrorCode(err) == stacks.ENOTFOUND || stale {
			// A patron deleted, or a PIN changed since this session signed in
			// (at the desk, or on another device while this one had a request
			// in flight that wrote its session back): sign in again.
			if err := s.Sessions.Destroy(ctx); err != nil {
				s.Error(w, r, err)
				return
			}
			if stale {
				s.Flash(r, "info", "Your PIN was changed, so you were signed out. Please sign in again with the new PIN.")
			}
			next.ServeHTTP(w, r)
			return
		} else if err != nil {
			s.Error(w, r, err)
			return
		}
		if now.Sub(seen) > seenRefresh {
			s.Sessions.Put(ctx, sessSeen, now.Unix())
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, patronKey{}, p)))
	})
}

// requirePatron lets a signed-in patron through and sends anyone else to the
// sign-in page, remembering the page they asked for.
func (s *Server) requirePatron(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if patronFrom(r.Context()) != nil {
			next.ServeHTTP(w, r)
			return
		}
		target := "/signin"
		if r.Method == http.MethodGet {
			target += "?next=" + urlQueryEscape(r.URL.RequestURI())
		}
		redirect(w, r, target, http.StatusSeeOther)
	})
}

// actor is the signed-in patron as the actor of audited writes: renewals and
// holds made online are audited as "opac:<card>", at the patron's home branch
// (a renewal's new due date follows that branch's calendar).
func actor(p *patrons.Patron) stacks.Actor {
	return stacks.Actor{Name: "opac:" + p.Card, BranchID: p.HomeBranchID}
}

// page returns the layout model for the request, taking any queued flashes.
func (s *Server) page(r *http.Request, title, nav string) *Page {
	p := &Page{Title: title, Nav: nav, Patron: patronFrom(r.Context()), LibraryName: "Stacks", Location: time.UTC}
	if prefs, err := s.preferences(r.Context()); err == nil {
		p.LibraryName, p.Location = prefs.LibraryName, prefs.Location
	} else {
		s.Logger.Error("read preferences", "err", err)
	}
	p.Flashes = kit.TakeFlashes(r.Context(), s.Sessions)
	return p
}

func (s *Server) preferences(ctx context.Context) (library.Preferences, error) {
	return s.prefs.Get(ctx, s.DB)
}

// Error shows err as a page: its message for our own errors, a generic one (and
// a log line) for anything else (kit.Failure). Never a stack trace.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := kit.Failure(s.Logger, r, err)
	if status == http.StatusInternalServerError {
		msg = "Something went wrong on our side; the problem has been logged. Please try again in a moment."
	}
	s.Render(w, r, status, ErrorPage(s.page(r, http.StatusText(status), ""), msg))
}

// errNoSuchPage is the 404 for a path the site does not have.
func errNoSuchPage(path string) error {
	return stacks.Errorf(stacks.ENOTFOUND, "There is no page at %s. Search the catalogue, or go to the start page.", path)
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.Error(w, r, errNoSuchPage(r.URL.Path))
}
