// Package web serves the staff pages: chi routes, templ views, scs sessions. Handlers
// are methods on Server; domain work is done by the domain packages, to which the
// handlers pass what they parsed from the request.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/staff"
)

// Config configures a Server.
type Config struct {
	DB     *db.DB
	Logger *slog.Logger
	// AccessLog, if set, logs one line per request.
	AccessLog *slog.Logger
	// IdleTimeout signs a user out after this long without a request (default 30 min).
	IdleTimeout time.Duration
	// SessionLifetime is the absolute lifetime of a sign-in (default 12 h).
	SessionLifetime time.Duration
	// SecureCookies marks the session cookie Secure (set when served over TLS).
	SecureCookies bool
	// CachePreferences keeps preferences in memory between requests (server mode);
	// off in CGI mode, where each process serves one request.
	CachePreferences bool
	// Metrics, if set, records requests and serves /metrics.
	Metrics *metrics.Metrics
	// SearchTimeout bounds each catalogue search (default 2 s): past it SQLite is
	// interrupted and staff are asked to narrow the search.
	SearchTimeout time.Duration
	// HeavyReadTimeout bounds each of the other reads whose cost staff choose
	// (label sheets, standard reports, a stocktake's results, histories; default
	// DefaultHeavyReadTimeout): they run in the searches' heavy-read slots, and
	// past it SQLite is interrupted and staff are asked to narrow what they asked
	// for (db.ReadBounded, in the services that take it; heavyError answers).
	HeavyReadTimeout time.Duration
	// Preferences, if set, is the preference cache to use (shared with the
	// patrons' site, so that an administrator's change shows on both at once);
	// nil: a cache of the server's own, on with CachePreferences.
	Preferences *library.PreferenceCache
	// MetricsAllow are the addresses that may read /metrics without signing in
	// (a Prometheus server); administrators may always.
	MetricsAllow []netip.Prefix
	// SMTP describes the relay notices go through (the settings page shows it);
	// NoticeSender sends through it, nil when none is configured.
	SMTP         notices.SMTPConfig
	NoticeSender notices.Sender
	// Background is the context of work a request leaves running (a patron
	// load with many PINs); nil: context.Background(). Cancel it, then call
	// Server.Wait, before the database closes.
	Background context.Context
	// NoBackground: the process ends with its request (CGI), so no work is
	// left running; a patron load with more than LoadPINsPerRequest PINs is
	// refused, with how to split it.
	NoBackground bool
	// LoadPINsPerRequest is how many PINs a patron load hashes in its own
	// request (default DefaultLoadPINsPerRequest); a load with more hashes
	// them in the background, with a progress page.
	LoadPINsPerRequest int
}

// DefaultSearchTimeout is Config.SearchTimeout's default: a search costs a few
// milliseconds at 100,000 titles (docs/performance.md), and the most expensive
// one within the search budget well under a second.
const DefaultSearchTimeout = 2 * time.Second

// Server is the staff web application.
type Server struct {
	kit.Site
	DB    *db.DB
	Staff *staff.Service
	Circ  circulationService

	cfg        Config
	prefs      *library.PreferenceCache
	staffCache *staff.Cache

	loadJobs patronLoadJobs
	lib      libraryServices
	Catalog  catalogService
	Labels   labelsService
	Holds    holdsService
	reports  reportsService
	patrons  patronServices
}

// New returns a Server for cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = 12 * time.Hour
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	if cfg.HeavyReadTimeout <= 0 {
		cfg.HeavyReadTimeout = DefaultHeavyReadTimeout
	}
	sm := kit.Sessions{
		DB: cfg.DB, Table: "sessions", Codec: sessionCodec{}, Lifetime: cfg.SessionLifetime,
		Cookie: "stacks_session", Secure: cfg.SecureCookies, Logger: cfg.Logger,
	}.New()
	prefs := cfg.Preferences
	if prefs == nil {
		prefs = library.NewPreferenceCache(cfg.CachePreferences)
	}
	circ := circulation.NewService(cfg.DB, prefs).WithHeavyReadTimeout(cfg.HeavyReadTimeout)
	s := &Server{
		Site:       kit.Site{Logger: cfg.Logger, Sessions: sm},
		DB:         cfg.DB,
		Staff:      staff.NewService(cfg.DB),
		Circ:       circ,
		cfg:        cfg,
		staffCache: staff.NewCache(),
		prefs:      prefs,
		lib:        newLibraryServices(cfg.DB, prefs),
		Catalog:    newCatalogService(cfg),
		Labels:     newLabelsService(cfg),
		Holds:      holds.NewService(cfg.DB),
		reports:    newReportsService(cfg),
		patrons:    newPatronServices(cfg.DB, circ),
	}
	s.SetHandler(s.Handler)
	return s
}

// Handler builds the router with every route and middleware.
func (s *Server) Handler() http.Handler {
	r := s.Router()
	var h http.Handler = r
	h = http.NewCrossOriginProtection().Handler(h)
	return h
}

// Router returns the chi router (exported for tests that walk every route).
func (s *Server) Router() chi.Router {
	r := chi.NewRouter()
	base := kit.Base{Logger: s.Logger, AccessLog: s.cfg.AccessLog, AccessMessage: "request", ContentSecurityPolicy: ContentSecurityPolicy}
	if s.cfg.Metrics != nil {
		base.Observe = s.observe
	}
	r.Use(base.Middleware()...)
	r.Use(kit.NoStore)
	r.Use(s.limitBody)

	r.Get("/healthz", kit.Healthz(s.DB, s.Logger))
	r.Handle("/static/*", static.Handler())
	r.Get("/favicon.ico", static.Favicon())

	r.Group(func(r chi.Router) {
		r.Use(s.loadSession)
		r.Get("/login", s.handleLoginForm)
		r.Post("/login", s.handleLogin)
		r.Post("/logout", s.handleLogout)
		r.Get("/metrics", s.handleMetrics)

		r.Group(func(r chi.Router) {
			r.Use(s.requireStaff)
			r.Get("/", s.handleHome)
			r.Get("/account", s.handleAccount)
			r.Post("/account/password", s.handleAccountPassword)
			r.Get("/workstation", s.handleWorkstation)
			r.Post("/workstation", s.handleWorkstationSave)
			r.Get("/branch", s.handleBranchForm)
			r.Post("/branch", s.handleBranch)
			s.patronRoutes(r)
			s.circulationRoutes(r)
			s.catalogRoutes(r)
			s.holdRoutes(r)
			s.transferRoutes(r)
			s.recordEditRoutes(r)
			s.catalogMaintenanceRoutes(r)
			s.reportRoutes(r)
			s.noticeRoutes(r)
			s.moneyRoutes(r)
			r.Route("/admin", func(r chi.Router) {
				r.Use(s.requireAdmin)
				s.adminRoutes(r)
			})
		})
		r.NotFound(s.handleNotFound)
		r.MethodNotAllowed(kit.MethodNotAllowed)
	})
	return r
}

type userKey struct{}

// userFrom returns the signed-in staff user, or nil.
func userFrom(ctx context.Context) *staff.User {
	u, _ := ctx.Value(userKey{}).(*staff.User)
	return u
}

// Session keys.
const (
	sessUserID = "uid"
	sessSeen   = "seen"
	sessFlash  = kit.FlashKey
	// sessBranch is the id of the branch the signed-in user works at, chosen at
	// sign-in or on the Change branch page; absent (0) for the account's home
	// branch.
	sessBranch = "branch"
)

// seenRefresh is how stale the session's "seen" stamp may get before a request
// rewrites it: the idle timeout is exact to within this.
const seenRefresh = time.Minute

// currentUser loads the signed-in user for the request, enforcing the idle timeout.
// It returns nil (and the reason to show, if any) when nobody is signed in.
func (s *Server) currentUser(r *http.Request) (*staff.User, string, error) {
	ctx := r.Context()
	uid := s.Sessions.GetInt64(ctx, sessUserID)
	if uid == 0 {
		return nil, "", nil
	}
	now := s.DB.Now()
	seen := time.Unix(s.Sessions.GetInt64(ctx, sessSeen), 0)
	if now.Sub(seen) > s.cfg.IdleTimeout {
		if err := s.Sessions.Destroy(ctx); err != nil {
			return nil, "", err
		}
		return nil, "You were signed out after a period without activity. Please log in again.", nil
	}
	u, err := s.staffCache.ByID(ctx, s.DB, uid, s.Sessions.GetInt64(ctx, sessBranch))
	if stacks.ErrorCode(err) == stacks.ENOTFOUND || (err == nil && !u.Active) {
		if err := s.Sessions.Destroy(ctx); err != nil {
			return nil, "", err
		}
		return nil, "Your account is no longer active. Ask an administrator.", nil
	} else if err != nil {
		return nil, "", err
	}
	if now.Sub(seen) > seenRefresh {
		s.Sessions.Put(ctx, sessSeen, now.Unix())
	}
	return u, "", nil
}

// requireStaff lets signed-in staff through and sends everyone else to the login
// page, remembering where they were going.
func (s *Server) requireStaff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, reason, err := s.currentUser(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if u == nil {
			s.redirectToLogin(w, r, reason)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// requireAdmin refuses staff without the administrator role. It runs after
// requireStaff.
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := userFrom(r.Context()); u == nil || !u.IsAdmin() {
			s.Error(w, r, stacks.Errorf(stacks.EFORBIDDEN, "This page is for administrators. Ask an administrator if you need a change made."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) redirectToLogin(w http.ResponseWriter, r *http.Request, reason string) {
	if isDeskScript(r) {
		// A scan sent by the desk script: a login page swapped into the desk's
		// list would be worse than useless. The script marks the scan as not sent,
		// to send again after signing in.
		http.Error(w, "You are signed out: sign in again, then send the scan again.", http.StatusUnauthorized)
		return
	}
	if reason != "" {
		s.Flash(r, "info", reason)
	}
	target := "/login"
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		target += "?next=" + urlQueryEscape(r.URL.RequestURI())
	}
	redirect(w, r, target, http.StatusSeeOther)
}

// preferences returns the library's preferences, from the cache shared with the
// patrons' site when there is one.
func (s *Server) preferences(ctx context.Context) (library.Preferences, error) {
	return s.prefs.Get(ctx, s.DB)
}

// page returns the layout model for the request, taking any queued flashes and
// this browser's workstation settings.
func (s *Server) page(r *http.Request, title, nav string) *Page {
	p := &Page{Title: title, Nav: nav, User: userFrom(r.Context()), LibraryName: "Stacks"}
	ws, _ := workstationFrom(r)
	p.Sounds, p.ReceiptPaper, p.ScanGap = ws.Sounds, ws.ReceiptPaper, ws.ScanGap
	if prefs, err := s.preferences(r.Context()); err == nil {
		p.LibraryName = prefs.LibraryName
	} else {
		s.Logger.Error("read preferences", "err", err)
	}
	p.Flashes = kit.TakeFlashes(r.Context(), s.Sessions)
	return p
}

// Error shows err as a page: its message for our own errors, a generic one (and a
// log line) for anything else (kit.Failure).
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := kit.Failure(s.Logger, r, err)
	s.Render(w, r, status, ErrorPage(s.page(r, http.StatusText(status), ""), status, msg))
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	u, reason, err := s.currentUser(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if u == nil {
		// Do not tell strangers which pages exist.
		s.redirectToLogin(w, r, reason)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
	s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no page at %s. Use the navigation above.", basepath.URL(r.Context(), r.URL.Path)))
}
