package hardening

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/sip"
)

// Several stacks serve processes on one PostgreSQL database. Two
// servers on one SQLite file is not a supported deployment (SQLite's one
// writer is one process's group-commit queue: see package db), so on SQLite
// these tests run their clients against one server, which is the same
// guarantee for one server; TestCrashRecovery is the SQLite counterpart of the
// node kill.

// pgDemo returns the URL of a new PostgreSQL database holding the demo library
// the SQLite tests copy (300 titles, 100 patrons), built once per test process.
func pgDemo(t *testing.T) string {
	t.Helper()
	if !pgtest.Selected(db.Postgres) {
		t.Skipf("PostgreSQL is not selected for this run (%s)", pgtest.EnginesEnv)
	}
	tmpl, err := pgtest.Template("hardening-demo-300-100", func(d *db.DB) error {
		_, err := demo.Create(context.Background(), d, demo.Options{Titles: 300, Patrons: 100})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pgtest.CopyURL(t, tmpl)
}

// twoServers starts the servers a test's clients use: two on one PostgreSQL
// database, or, on SQLite, one (returned twice).
func twoServers(t *testing.T, e db.Engine, extraArgs func() []string) (target string, a, b *server) {
	t.Helper()
	args := func() []string {
		if extraArgs == nil {
			return nil
		}
		return extraArgs()
	}
	if e == db.SQLite {
		target = newDB(t)
		a = startServer(t, target, args()...)
		return target, a, a
	}
	target = pgDemo(t)
	return target, startServer(t, target, args()...), startServer(t, target, args()...)
}

// TestDoubleCheckoutTwoServers: two desks, each on its own server and serving
// its own patron, scan the same item at the same moment, round after round.
// Each round makes exactly one loan: one desk's checkout is acknowledged (303),
// the other's answers that the item is checked out to the first patron (409,
// the desk's question whether to check it in from them), never an error, and
// the database never holds two open loans of the item. The winner checks it in
// before the next round.
func TestDoubleCheckoutTwoServers(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			target, sa, sb := twoServers(t, e, nil)
			loads := chooseLoads(t, target, 2, 1)
			barcode, itemID := loads[0].items[0].barcode, loads[0].items[0].id
			d := openDB(t, target)
			loansBefore := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ?`, itemID)

			desks := []*desk{newDesk(sa.Base), newDesk(sb.Base)}
			for i, dk := range desks {
				dk.login(t, "desk")
				if status, _, err := dk.post("/checkout/patron", url.Values{"card": {loads[i].card}}); err != nil || status != http.StatusSeeOther {
					t.Fatalf("desk %d: take patron %s: %d %v", i, loads[i].card, status, err)
				}
			}
			rounds := scale(20, 100)
			wins := [2]int{}
			for round := 0; round < rounds; round++ {
				var wg sync.WaitGroup
				start := make(chan struct{})
				status := [2]int{}
				body := [2]string{}
				errs := [2]error{}
				for i, dk := range desks {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						status[i], body[i], errs[i] = dk.postPage("/checkout", url.Values{"barcode": {barcode}})
					}()
				}
				close(start)
				wg.Wait()
				for i := range desks {
					if errs[i] != nil {
						t.Fatalf("round %d: desk %d: %v", round, i, errs[i])
					}
				}
				winner := -1
				switch {
				case status[0] == http.StatusSeeOther && status[1] == http.StatusConflict:
					winner = 0
				case status[1] == http.StatusSeeOther && status[0] == http.StatusConflict:
					winner = 1
				default:
					t.Fatalf("round %d: the two checkouts answered %d and %d, want one 303 and one 409\n%s\n%s",
						round, status[0], status[1], excerpt(body[0]), excerpt(body[1]))
				}
				loser := 1 - winner
				if want := "is checked out to"; !strings.Contains(body[loser], want) || !strings.Contains(body[loser], loads[winner].card) {
					t.Errorf("round %d: the losing desk's page does not say the item %s %s (%s):\n%s", round, want, loads[winner].card, barcode, excerpt(body[loser]))
				}
				wins[winner]++
				if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL`, itemID); n != 1 {
					t.Fatalf("round %d: %d open loans of %s, want 1", round, n, barcode)
				}
				if st, _, err := desks[winner].post("/checkin", url.Values{"barcode": {barcode}}); err != nil || st != http.StatusSeeOther {
					t.Fatalf("round %d: check in: %d %v", round, st, err)
				}
			}
			if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ?`, itemID) - loansBefore; n != rounds {
				t.Errorf("%d rounds made %d loans, want one each", rounds, n)
			}
			if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL`, itemID); n != 0 {
				t.Errorf("%d open loans of %s after the last checkin", n, barcode)
			}
			t.Logf("%d rounds: desk A won %d, desk B %d", rounds, wins[0], wins[1])
		})
	}
}

// excerpt is the start of a page, for a failure message.
func excerpt(body string) string {
	if i := strings.Index(body, "<main"); i >= 0 {
		body = body[i:]
	}
	if len(body) > 1500 {
		body = body[:1500]
	}
	return body
}

// TestKillOneOfTwoServers: desks on two servers on one PostgreSQL database
// check items out and in; one server is killed (SIGKILL) mid-run. Its desks'
// requests fail at once (no answer, no hang), and they carry on at the other
// server, as a balancer would send them. The surviving server answers every
// request, before and after the kill, with the expected 303; afterwards the
// database holds every operation any desk saw acknowledged, and of the request
// each killed desk had in flight, at most that one. (SQLite's counterpart, one
// server killed and restarted, is TestCrashRecovery.)
func TestKillOneOfTwoServers(t *testing.T) {
	target := pgDemo(t)
	sa, sb := startServer(t, target), startServer(t, target)
	desks := scale(6, 12)
	loads := chooseLoads(t, target, desks, 4)
	readBaseline(t, target, loads)
	d := openDB(t, target)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	ackedBefore, ackedAfter := 0, 0
	killed := make(chan struct{})
	report := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// acks counts each desk's acknowledged operations in the current phase
	// (before the kill, after it); acked is signalled at each.
	acks := map[*deskLoad]int{}
	acked := make(chan struct{}, 1)
	for _, l := range loads {
		l.onAck = func() {
			mu.Lock()
			acks[l]++
			mu.Unlock()
			select {
			case acked <- struct{}{}:
			default:
			}
		}
	}
	// waitAcks waits until every desk has n operations acknowledged in the
	// phase, or the time limit.
	waitAcks := func(phase string, n int) {
		limit := time.After(2 * time.Minute)
		for {
			mu.Lock()
			least := n
			for _, l := range loads {
				least = min(least, acks[l])
			}
			mu.Unlock()
			if least >= n {
				return
			}
			select {
			case <-acked:
			case <-limit:
				t.Errorf("%s: a desk has fewer than %d operations acknowledged after 2 minutes", phase, n)
				return
			}
		}
	}
	for i, l := range loads {
		onA := i%2 == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := sb.Base
			if onA {
				base = sa.Base
			}
			n, problem := l.run(base, stop)
			mu.Lock()
			ackedBefore += n
			mu.Unlock()
			if problem != "" {
				report("%s", problem)
				return
			}
			if !l.gone {
				return
			}
			if !onA {
				report("desk %s: the surviving server stopped answering", l.card)
				return
			}
			select {
			case <-killed:
			default:
				report("desk %s: server A stopped answering before it was killed", l.card)
				return
			}
			// The balancer sends the desk to the other server. Where its
			// request in flight left each item is what the desk finds there.
			resync(t, d, l)
			n, problem = l.run(sb.Base, stop)
			mu.Lock()
			ackedAfter += n
			mu.Unlock()
			if problem != "" {
				report("after the kill, at the surviving server: %s", problem)
			} else if l.gone {
				report("desk %s: the surviving server stopped answering after the kill", l.card)
			}
		}()
	}
	perPhase := scale(8, 40)
	waitAcks("before the kill", perPhase)
	close(killed)
	sa.kill()
	mu.Lock()
	clear(acks)
	mu.Unlock()
	// Requests to the killed server fail at once, not at the client's timeout.
	c := &http.Client{Timeout: time.Minute}
	began := time.Now()
	if resp, err := c.Get(sa.Base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the killed server answered /healthz: %s", resp.Status)
	} else if took := time.Since(began); took > 10*time.Second {
		t.Errorf("a request to the killed server took %v to fail", took)
	}
	waitAcks("after the kill", perPhase)
	close(stop)
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	if st, _, err := newDesk(sb.Base).get("/healthz"); err != nil || st != http.StatusOK {
		t.Errorf("the surviving server's /healthz after the run: %d %v", st, err)
	}
	verify(t, 0, target, loads)
	found := "all in the database"
	if t.Failed() {
		found = "the test failed (above)"
	}
	t.Logf("%d desks: %d operations acknowledged before the kill, %d after (the killed server's desks at the other); %s", desks, ackedBefore, ackedAfter, found)
}

// resync sets where each of the desk's items is, as its patron's page at the
// other server shows it, after its server died with a request in flight. It
// reads inside a write transaction: the write lock waits for the killed
// server's transaction, if any, to be committed or rolled back.
func resync(t *testing.T, d *db.DB, l *deskLoad) {
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		for _, it := range l.items {
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL`, it.id).Scan(&n); err != nil {
				return err
			}
			it.onLoan = n > 0
		}
		return nil
	})
	if err != nil {
		t.Errorf("desk %s: read its items: %v", l.card, err)
	}
}

// TestSIPOnAnyServer: two servers on one PostgreSQL database, each with its
// SIP2 listener. A self-check machine checks an item out through one server
// and in through the other; each answers success, and the loan and the item's
// status agree with what each said.
func TestSIPOnAnyServer(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			target, sa, sb := twoServers(t, e, func() []string {
				addr, err := freeAddr()
				if err != nil {
					t.Fatal(err)
				}
				return []string{"--sip-addr", addr}
			})
			loads := chooseLoads(t, target, 1, 1)
			card, it := loads[0].card, loads[0].items[0]
			d := openDB(t, target)
			terminal := func(s *server) *sip.Client {
				t.Helper()
				addr := sipAddr(t, s)
				c, err := sip.Dial(context.Background(), addr)
				if err != nil {
					t.Fatalf("dial SIP at %s: %v", addr, err)
				}
				t.Cleanup(func() { c.Close() })
				if err := c.Login("kiosk", "kiosk", "CEN"); err != nil {
					t.Fatalf("SIP login at %s: %v", addr, err)
				}
				return c
			}
			ta, tb := terminal(sa), terminal(sb)
			now := time.Now().Format("20060102    150405")
			for round := 0; round < 3; round++ {
				resp, err := ta.Send("11YN" + now + now + "AOCEN|AA" + card + "|AB" + it.barcode + "|AC|")
				if err != nil || !strings.HasPrefix(resp, "121") {
					t.Fatalf("round %d: checkout at server A: %q %v", round, resp, err)
				}
				if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL AND patron_id = ?`, it.id, it.patronID); n != 1 {
					t.Fatalf("round %d: after the checkout at A, %d open loans to the patron", round, n)
				}
				resp, err = tb.Send("09N" + now + now + "APCEN|AOCEN|AB" + it.barcode + "|AC|")
				if err != nil || !strings.HasPrefix(resp, "101") {
					t.Fatalf("round %d: checkin at server B: %q %v", round, resp, err)
				}
				var status string
				if err := d.Read(context.Background(), func(tx *db.Tx) error {
					return tx.QueryRow(`SELECT status FROM items WHERE id = ?`, it.id).Scan(&status)
				}); err != nil {
					t.Fatal(err)
				}
				if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL`, it.id); n != 0 || status != "available" {
					t.Fatalf("round %d: after the checkin at B: %d open loans, item %s", round, n, status)
				}
			}
		})
	}
}

// sipAddr is the address the server's SIP listener was given (--sip-addr).
func sipAddr(t *testing.T, s *server) string {
	t.Helper()
	for i, a := range s.cmd.Args {
		if a == "--sip-addr" && i+1 < len(s.cmd.Args) {
			return s.cmd.Args[i+1]
		}
	}
	t.Fatal("the server has no --sip-addr")
	return ""
}

// TestPreferencesReachOtherServer: an administrator saves the preferences on
// one server; the next page from the other server, which had them cached,
// shows the new library name.
func TestPreferencesReachOtherServer(t *testing.T) {
	target := pgDemo(t)
	sa, sb := startServer(t, target), startServer(t, target)
	admin, reader := newDesk(sa.Base), newDesk(sb.Base)
	admin.login(t, "admin")
	reader.login(t, "desk")
	for round, name := range []string{"Riverside Consortium", "Hilltop Libraries"} {
		// The other server's page before: its cache holds the old name.
		if st, _, err := reader.get("/checkout"); err != nil || st != http.StatusOK {
			t.Fatalf("round %d: GET /checkout at B: %d %v", round, st, err)
		}
		st, loc, err := admin.post("/admin/preferences", url.Values{"library_name": {name}, "fines_limit": {"5.00"},
			"timezone": {"UTC"}, "desk_idle": {"5"}, "anonymise_days": {"0"}, "purge_years": {"0"}})
		if err != nil || st != http.StatusSeeOther {
			t.Fatalf("round %d: save the preferences at A: %d (to %q) %v", round, st, loc, err)
		}
		st, body, err := reader.get("/checkout")
		if err != nil || st != http.StatusOK || !strings.Contains(body, name) {
			t.Errorf("round %d: the next page at B (%d, %v) does not show the library name %q saved at A", round, st, err, name)
		}
	}
}
