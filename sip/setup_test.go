package sip_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
)

// smallDemo is the library most tests use: the fixtures and a small generated part.
var smallDemo = demo.Options{Titles: 50, Patrons: 30}

func TestMain(m *testing.M) {
	// The race detector makes bcrypt many times slower; tests need no strong hashes.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

// env is a demo library in a file of its own, with a SIP server on 127.0.0.1.
type env struct {
	tb   testing.TB
	d    *db.DB
	srv  *sip.Server
	addr string
	// clock is the server's time unless realClock (setClock moves it).
	clock *atomic.Int64
}

// setClock moves the server's clock (an env made without realClock).
func (e *env) setClock(t time.Time) {
	e.tb.Helper()
	if e.clock == nil {
		e.tb.Fatal("setClock on an env with the real clock")
	}
	e.clock.Store(t.UnixNano())
}

// envOptions change what newEnv sets up.
type envOptions struct {
	demo     demo.Options
	db       db.Options
	config   sip.Config // DB and Logger are filled in
	logLevel slog.Level
	// realClock keeps the database's real clock; by default it stands at dbtest.Monday.
	realClock bool
}

// newEnv copies a demo library created on dbtest.Monday and starts a server on it.
func newEnv(tb testing.TB) *env {
	return newEnvWith(tb, envOptions{demo: smallDemo})
}

func newEnvWith(tb testing.TB, o envOptions) *env {
	tb.Helper()
	d := openDemoCopy(tb, o.demo, o.db)
	var clock *atomic.Int64
	if !o.realClock {
		clock = new(atomic.Int64)
		clock.Store(dbtest.Monday.UnixNano())
		d.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	}
	cfg := o.config
	cfg.DB = d
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: o.logLevel}))
	}
	srv, addr, _ := startServer(tb, cfg, "127.0.0.1:0")
	return &env{tb: tb, d: d, srv: srv, addr: addr, clock: clock}
}

// startServer starts a SIP server for cfg listening on addr; stop shuts it down
// (the test's end does if nothing did before).
func startServer(t testing.TB, cfg sip.Config, addr string) (srv *sip.Server, bound string, stop func() error) {
	t.Helper()
	srv = sip.New(cfg)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			stopErr = srv.Shutdown(ctx)
			if err := <-done; !errors.Is(err, sip.ErrServerClosed) {
				stopErr = errors.Join(stopErr, fmt.Errorf("Serve returned %v, want ErrServerClosed", err))
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return srv, ln.Addr().String(), stop
}

// openDemoCopy opens a copy of the demo library of size opt created on dbtest.Monday;
// its clock is the real one.
func openDemoCopy(tb testing.TB, opt demo.Options, dopt db.Options) *db.DB {
	tb.Helper()
	d := demotest.Demo(tb, opt, dbtest.Monday, dopt)
	d.Now = time.Now
	return d
}

// client connects and logs in as the demo's kiosk account.
func (e *env) client() *sip.Client {
	e.tb.Helper()
	c := e.dial()
	if err := c.Login("kiosk", "kiosk", "CEN"); err != nil {
		e.tb.Fatal(err)
	}
	return c
}

// dial connects without logging in.
func (e *env) dial() *sip.Client {
	e.tb.Helper()
	c, err := sip.Dial(context.Background(), e.addr)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return c
}

// send sends a message and fails the test on a transport error.
func send(tb testing.TB, c *sip.Client, msg string) string {
	tb.Helper()
	resp, err := c.Send(msg)
	if err != nil {
		tb.Fatalf("%s: %v", msg, err)
	}
	return resp
}

// exec runs a statement on the library's database.
func (e *env) exec(query string, args ...any) {
	e.tb.Helper()
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	})
	if err != nil {
		e.tb.Fatalf("%s: %v", query, err)
	}
}

// queryString runs a query that returns one value, as text.
func (e *env) queryString(query string, args ...any) string {
	e.tb.Helper()
	var s sql.NullString
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&s)
	})
	if err != nil {
		e.tb.Fatalf("%s: %v", query, err)
	}
	return s.String
}

// queryRows runs a query and returns its rows as text, one string per row.
func queryRows(tb testing.TB, d *db.DB, query string, args ...any) []string {
	tb.Helper()
	var out []string
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			parts := make([]string, len(cols))
			for i, v := range vals {
				parts[i] = cols[i] + "=" + v.String
				if !v.Valid {
					parts[i] = cols[i] + "=NULL"
				}
			}
			out = append(out, strings.Join(parts, " "))
		}
		return rows.Err()
	})
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}

// responseFields splits a response's variable-length fields, after fixed bytes of
// fixed-length fields following the identifier, into the first value of each.
func responseFields(resp string, fixed int) map[string]string {
	out := map[string]string{}
	if len(resp) < 2+fixed {
		return out
	}
	for _, f := range strings.Split(resp[2+fixed:], "|") {
		if len(f) < 2 {
			continue
		}
		if _, ok := out[f[:2]]; !ok {
			out[f[:2]] = f[2:]
		}
	}
	return out
}

// Request builders, with the transaction date at dbtest.Monday.
const sipNow = "20261130    100000"

func checkoutMsg(card, barcode string) string {
	return "11YN" + sipNow + strings.Repeat(" ", 18) + "AOCEN|AA" + card + "|AB" + barcode + "|AC|"
}

func checkinMsg(barcode string) string {
	return "09N" + sipNow + sipNow + "APCEN|AOCEN|AB" + barcode + "|AC|"
}

// settings changes the settings of the demo's kiosk account through the API the
// administration page uses: change is given the account's current ones.
func (e *env) settings(change func(u *sip.AccountUpdate)) {
	e.tb.Helper()
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		accts, err := sip.ListAccounts(tx)
		if err != nil {
			return err
		}
		for _, a := range accts {
			if a.Username != "kiosk" {
				continue
			}
			u := sip.AccountUpdate{Institution: a.Institution, BranchCode: a.BranchCode, Settings: a.Settings,
				SortBins: a.Settings.SortBins.String(), UseServerBins: a.Settings.SortBins == nil}
			change(&u)
			return sip.UpdateAccount(tx, stacks.System, a.ID, u)
		}
		return fmt.Errorf("no kiosk account")
	})
	if err != nil {
		e.tb.Fatal(err)
	}
}
