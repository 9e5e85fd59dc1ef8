package sip_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
)

// The rush scenario's knobs, read from the environment (make sip-bench sets them).
const (
	// rushEnv is how long the rush runs (a Go duration); unset, TestSIPRush is
	// skipped.
	rushEnv = "STACKS_SIP_RUSH"
	// rushTerminalsEnv is the number of terminals (default 50).
	rushTerminalsEnv = "STACKS_SIP_RUSH_TERMINALS"
	// rushAccountsEnv is "own" (default: each terminal its own SIP account) or
	// "shared" (all log in as kiosk).
	rushAccountsEnv = "STACKS_SIP_RUSH_ACCOUNTS"
	// rushOutEnv is where the results go (default bin/sip-rush.md).
	rushOutEnv = "STACKS_SIP_RUSH_OUT"
	// rushGapEnv is the wait between a terminal's patrons, as MIN-MAX (default
	// 20s-40s); shorter makes a harsher rush.
	rushGapEnv = "STACKS_SIP_RUSH_GAP"
	// rushLogEnv, if set, is a file for the servers' log at debug level (each
	// message with its answer and duration), to see why something was slow.
	rushLogEnv = "STACKS_SIP_RUSH_LOG"
)

// The rush's pace and its acceptance figures.
const (
	rushPIN          = "1234"
	rushPassword     = "rush-terminal"
	rushP99          = 500 * time.Millisecond
	rushLoginsWithin = 5 * time.Second
)

// TestSIPRush is a school's rush at the self-check machines: terminals (50), each
// serving a new patron every 20 to 40 s: patron information (63) with the PIN,
// two to five checkouts of free items or checkins of the items the patron has
// (11 or 09, with the PIN as kiosks send it), end session (35); a patron whose
// PIN is not accepted goes away with nothing done. Then the server
// is shut down and a new one started on the same database and port, and every
// terminal connects and logs in (93) at the same moment.
//
// The conditions are a library's: the default demo library (2,010 titles, 500
// patrons), the server on 127.0.0.1 with the real clock, and the PINs and SIP
// passwords hashed at bcrypt's real cost (the package's tests otherwise use the
// cheapest). Acceptance: no message refused (a PIN not checked or not accepted,
// a checkout or checkin of a free item refused), no 940 for the right password,
// the 99th percentile of every message type under 500 ms, and every login after
// the restart answered within 5 s; and the loans in the database are those the
// answers said. The results go to bin/sip-rush.md as a
// markdown table (docs/performance.md quotes it). make sip-bench runs it.
func TestSIPRush(t *testing.T) {
	durText := os.Getenv(rushEnv)
	if durText == "" {
		t.Skip("the rush scenario takes minutes: run it with make sip-bench (RUSH_DURATION=3m), or " +
			rushEnv + "=3m go test -count=1 -run '^TestSIPRush$' -v ./sip/")
	}
	dur, err := time.ParseDuration(durText)
	if err != nil || dur <= 0 {
		t.Fatalf("%s=%q: want a duration such as 3m", rushEnv, durText)
	}
	terminals := 50
	if s := os.Getenv(rushTerminalsEnv); s != "" {
		if terminals, err = strconv.Atoi(s); err != nil || terminals < 1 {
			t.Fatalf("%s=%q: want a number of terminals", rushTerminalsEnv, s)
		}
	}
	shared := false
	switch a := os.Getenv(rushAccountsEnv); a {
	case "", "own":
	case "shared":
		shared = true
	default:
		t.Fatalf("%s=%q: want own or shared", rushAccountsEnv, a)
	}
	minGap, maxGap := 20*time.Second, 40*time.Second
	if s := os.Getenv(rushGapEnv); s != "" {
		lo, hi, _ := strings.Cut(s, "-")
		a, err1 := time.ParseDuration(lo)
		b, err2 := time.ParseDuration(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			t.Fatalf("%s=%q: want MIN-MAX, such as 20s-40s", rushGapEnv, s)
		}
		minGap, maxGap = a, b
	}
	if dur < maxGap {
		t.Fatalf("%s=%s is shorter than the longest wait between patrons (%s): some terminals would serve no one", rushEnv, dur, maxGap)
	}
	out := os.Getenv(rushOutEnv)
	if out == "" {
		out = filepath.Join("..", "bin", "sip-rush.md")
	}

	r := newRush(t, terminals, shared)
	r.minGap, r.maxGap = minGap, maxGap
	r.run(dur)
	r.restart()
	r.checkLoans()
	md := r.report(dur)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md)
	r.accept()
}

// rush is the scenario's state: the library, the server and what the terminals saw.
type rush struct {
	t    *testing.T
	e    *env
	cfg  sip.Config
	logs *rushLog
	// stop shuts the running server down (once).
	stop      func() error
	terminals int
	shared    bool
	// minGap and maxGap bound the wait between a terminal's patrons.
	minGap, maxGap time.Duration
	// costMs is one bcrypt comparison at the secrets' cost, measured before.
	costMs float64

	patrons chan string // free patrons, first in first out

	mu sync.Mutex
	// free are the items no one has; held, the items each patron borrowed in the
	// rush (or before it), which their next session checks in.
	free []string
	held map[string][]string
	// lat are the round trips by message type ("93", "63", ...), of the rush.
	lat map[string][]time.Duration
	// refused counts refusals by message type; reasons, by type and screen
	// message; errs are failed exchanges (timeouts, closed connections).
	refused  map[string]int
	reasons  map[string]int
	errs     []string
	sessions int
	// wrongLogins are 940 answers to the right password, in the rush and after
	// the restart.
	wrongLogins  int
	restartLat   []time.Duration
	restartOK    int
	restartWrong int
	restartErrs  []string

	loadStart, loadEnd string
	compared, poolBusy int64
}

func newRush(t *testing.T, terminals int, shared bool) *rush {
	r := &rush{t: t, terminals: terminals, shared: shared, held: map[string][]string{}, lat: map[string][]time.Duration{},
		refused: map[string]int{}, reasons: map[string]int{}}
	r.logs = newRushLog(t)
	// Every terminal connects from 127.0.0.1: allow them all, as a library whose
	// terminals come through one tunnel would (and the connection that lends
	// books before the rush, whose close the server may not have seen yet).
	d := openDemoCopy(t, demo.Options{}, db.Options{})
	r.cfg = sip.Config{DB: d, MaxConnsPerAddr: terminals + 1, Logger: slog.New(r.logs)}
	r.e = &env{tb: t, d: d}
	r.e.srv, r.e.addr, r.stop = startServer(t, r.cfg, "127.0.0.1:0")

	// The real cost: one hash of each secret at bcrypt.DefaultCost. Every patron
	// gets the same PIN hash (a comparison costs the same whoever's it is).
	pinHash, err := bcrypt.GenerateFromPassword([]byte(rushPIN), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if bcrypt.CompareHashAndPassword(pinHash, []byte(rushPIN)) != nil {
		t.Fatal("the PIN hash does not match")
	}
	r.costMs = float64(time.Since(start).Microseconds()) / 1000
	passHash, err := bcrypt.GenerateFromPassword([]byte(rushPassword), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	err = r.e.d.Write(context.Background(), func(tx *db.Tx) error {
		if _, err := tx.Exec(`UPDATE patrons SET pin_hash = ?`, string(pinHash)); err != nil {
			return err
		}
		if shared {
			_, err := tx.Exec(`UPDATE sip_accounts SET password_hash = ? WHERE username = 'kiosk'`, string(passHash))
			return err
		}
		for i := range terminals {
			_, err := sip.CreateAccount(tx, stacks.System, sip.NewAccount{Username: r.account(i), Password: rushPassword,
				Institution: "CEN", BranchCode: "CEN", PasswordHash: string(passHash)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Patrons who may borrow books at Central: adults, card valid, not blocked,
	// nothing owed or overdue, far from the loan limit (20 books).
	now := db.FormatTime(time.Now())
	cards := queryRows(t, r.e.d, `SELECT p.card FROM patrons p
		WHERE p.blocked = 0 AND p.card_lost = 0 AND p.expires_on > ? AND p.category_id = 1
		AND (SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = p.id) <= 0
		AND NOT EXISTS (SELECT 1 FROM loans WHERE patron_id = p.id AND returned_at IS NULL AND due_at < ?)
		AND (SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL) <= 8
		ORDER BY p.id`, time.Now().AddDate(0, 2, 0).Format(time.DateOnly), now)
	// Books at home and on the shelf at Central that no hold wants.
	items := queryRows(t, r.e.d, `SELECT i.barcode FROM items i
		WHERE i.status = 'available' AND i.home_branch_id = 1 AND i.current_branch_id = 1 AND i.item_type_id = 1
		AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id`)
	if len(cards) < 2*terminals || len(items) < 20*terminals {
		t.Fatalf("the demo library has %d patrons and %d items fit for the rush; want %d and %d", len(cards), len(items), 2*terminals, 20*terminals)
	}
	for i := range cards {
		cards[i] = strings.TrimPrefix(cards[i], "card=")
	}
	for i := range items {
		items[i] = strings.TrimPrefix(items[i], "barcode=")
	}
	rand.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	r.free = items
	r.patrons = make(chan string, len(cards))
	for _, c := range cards {
		r.patrons <- c
	}

	// Half the patrons come to return what they borrowed: lend them two to five
	// books first (without a PIN, so without a comparison), keeping at least half
	// the items free.
	setup := r.e.dial()
	if err := setup.Login(r.account(0), rushPassword, "CEN"); err != nil {
		t.Fatal(err)
	}
	for i, card := range cards {
		if i%2 == 1 || len(r.free) < len(items)/2 {
			continue
		}
		for range 2 + rand.IntN(4) {
			bc := r.take()
			if resp := send(t, setup, "11YN"+sip.Date(time.Now())+strings.Repeat(" ", 18)+"AOCEN|AA"+card+"|AB"+bc+"|AC|"); !strings.HasPrefix(resp, "121") {
				t.Fatalf("lending %s to %s before the rush: %s", bc, card, resp)
			}
			r.held[card] = append(r.held[card], bc)
		}
	}
	setup.Close()
	t.Logf("%d terminals (%s), %d patrons (%d with books to return), %d books, bcrypt cost %d: %.0f ms a comparison",
		terminals, r.accountsText(), len(cards), len(r.held), len(items), bcrypt.DefaultCost, r.costMs)
	return r
}

// account is terminal i's SIP account.
func (r *rush) account(i int) string {
	if r.shared {
		return "kiosk"
	}
	return fmt.Sprintf("rush%02d", i+1)
}

func (r *rush) accountsText() string {
	if r.shared {
		return "one shared SIP account"
	}
	return "each its own SIP account"
}

// take gives out a free item ("" when none is left).
func (r *rush) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.free) == 0 {
		return ""
	}
	bc := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	return bc
}

func (r *rush) give(bc string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.free = append(r.free, bc)
}

func (r *rush) record(typ string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat[typ] = append(r.lat[typ], d)
}

func (r *rush) refuse(typ, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused[typ]++
	r.reasons[typ+" "+why]++
}

func (r *rush) fail(what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, what+": "+err.Error())
}

// exchange sends msg, recording its round trip under its type.
func (r *rush) exchange(c *sip.Client, msg string) (string, bool) {
	start := time.Now()
	resp, err := c.Send(msg)
	r.record(msg[:2], time.Since(start))
	if err != nil {
		r.fail(msg[:2], err)
		return "", false
	}
	return resp, true
}

// run is the rush: every terminal logs in at a random moment of its first
// interval, then serves patrons until dur has passed.
func (r *rush) run(dur time.Duration) {
	r.loadStart = loadAverage()
	compared, busy := passwords.Comparisons(), passwords.Default.Refused()
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for i := range r.terminals {
		wg.Go(func() { r.terminal(i, end) })
	}
	wg.Wait()
	r.compared, r.poolBusy = passwords.Comparisons()-compared, passwords.Default.Refused()-busy
	r.loadEnd = loadAverage()
}

// gap is a random wait between patrons.
func (r *rush) gap() time.Duration {
	return r.minGap + rand.N(r.maxGap-r.minGap+1)
}

func (r *rush) terminal(i int, end time.Time) {
	if g := r.gap(); g > 0 {
		time.Sleep(rand.N(g)) // the emulated terminals start apart
	}
	c, err := sip.Dial(context.Background(), r.e.addr)
	if err != nil {
		r.fail("connect", err)
		return
	}
	defer c.Close()
	c.Timeout = 30 * time.Second
	resp, ok := r.exchange(c, sip.LoginMessage(r.account(i), rushPassword, "CEN"))
	if !ok {
		return
	}
	if !strings.HasPrefix(resp, "941") {
		r.mu.Lock()
		r.wrongLogins++
		r.mu.Unlock()
		r.refuse("93", resp)
		return
	}
	if resp, ok := r.exchange(c, "9900302.00"); !ok {
		return
	} else if !strings.HasPrefix(resp, "98Y") {
		r.refuse("99", resp)
	}
	for time.Now().Before(end) {
		var card string
		select {
		case card = <-r.patrons:
		case <-time.After(time.Until(end)):
			return
		}
		ok := r.serve(c, card)
		r.patrons <- card
		if !ok {
			return
		}
		time.Sleep(min(r.gap(), max(0, time.Until(end)))) // the emulated gap between patrons
	}
}

// serve is one patron's session at a terminal; false when the connection failed.
func (r *rush) serve(c *sip.Client, card string) bool {
	r.mu.Lock()
	r.sessions++
	mine := r.held[card]
	delete(r.held, card)
	r.mu.Unlock()
	date := func() string { return sip.Date(time.Now()) }

	// Patron information, with the charged items, and the PIN.
	resp, ok := r.exchange(c, "63001"+date()+"  Y       AOCEN|AA"+card+"|AC|AD"+rushPIN+"|")
	if !ok {
		return false
	}
	f := responseFields(resp, 59)
	pinOK := strings.HasPrefix(resp, "64") && f["CQ"] == "Y" && f["BL"] == "Y"
	switch {
	case !pinOK:
		r.refuse("63", fmt.Sprintf("CQ %q, AF %q", f["CQ"], f["AF"]))
	case len(resp) > 2 && resp[2] == 'Y':
		r.refuse("63", "charge privileges denied: "+resp[2:16]+" AF "+strconv.Quote(f["AF"]))
	}

	switch {
	case !pinOK:
		// A kiosk whose PIN was not accepted lends nothing: the patron is
		// turned away, and keeps what they came to return.
		r.keep(card, mine)
	case len(mine) > 0:
		// Return what they borrowed.
		var kept []string
		for _, bc := range mine {
			resp, ok := r.exchange(c, "09N"+date()+date()+"APCEN|AOCEN|AB"+bc+"|AC|")
			if !ok {
				return false
			}
			if !strings.HasPrefix(resp, "101") {
				r.refuse("09", strconv.Quote(responseFields(resp, 22)["AF"]))
				kept = append(kept, bc)
				continue
			}
			r.give(bc)
		}
		r.keep(card, kept)
	default:
		// Borrow two to five books.
		var got []string
		for range 2 + rand.IntN(4) {
			bc := r.take()
			if bc == "" {
				break
			}
			resp, ok := r.exchange(c, "11YN"+date()+strings.Repeat(" ", 18)+"AOCEN|AA"+card+"|AB"+bc+"|AC|AD"+rushPIN+"|")
			if !ok {
				return false
			}
			if !strings.HasPrefix(resp, "121") {
				r.refuse("11", strconv.Quote(responseFields(resp, 22)["AF"]))
				r.give(bc)
				continue
			}
			got = append(got, bc)
		}
		r.keep(card, got)
	}

	resp, ok = r.exchange(c, "35"+date()+"AOCEN|AA"+card+"|AD"+rushPIN+"|")
	if !ok {
		return false
	}
	if !strings.HasPrefix(resp, "36Y") {
		r.refuse("35", resp)
	}
	return true
}

func (r *rush) keep(card string, items []string) {
	if len(items) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[card] = items
}

// restart shuts the server down, starts a new one on the same database and
// port, and has every terminal connect and log in at the same moment.
func (r *rush) restart() {
	t := r.t
	if err := r.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	r.e.srv, _, r.stop = startServer(t, r.cfg, r.e.addr)

	start := make(chan struct{})
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	for i := range r.terminals {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-start
			t0 := time.Now()
			c, err := sip.Dial(context.Background(), r.e.addr)
			if err != nil {
				r.mu.Lock()
				r.restartErrs = append(r.restartErrs, err.Error())
				r.mu.Unlock()
				return
			}
			defer c.Close()
			c.Timeout = 60 * time.Second
			resp, err := c.Send(sip.LoginMessage(r.account(i), rushPassword, "CEN"))
			took := time.Since(t0)
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case err != nil:
				r.restartErrs = append(r.restartErrs, err.Error())
			case strings.HasPrefix(resp, "941"):
				r.restartOK++
				r.restartLat = append(r.restartLat, took)
			default:
				r.restartWrong++
				r.wrongLogins++
				r.restartLat = append(r.restartLat, took)
			}
		})
	}
	ready.Wait()
	close(start)
	wg.Wait()
}

// checkLoans compares the loans in the database with what the terminals were
// told: every book a patron was lent and has not returned is on loan to them,
// and every book on the shelf is on loan to no one.
func (r *rush) checkLoans() {
	onLoan := map[string]string{}
	for _, row := range queryRows(r.t, r.e.d, `SELECT i.barcode, p.card FROM loans l
		JOIN items i ON i.id = l.item_id JOIN patrons p ON p.id = l.patron_id WHERE l.returned_at IS NULL`) {
		f := strings.Fields(row)
		onLoan[strings.TrimPrefix(f[0], "barcode=")] = strings.TrimPrefix(f[1], "card=")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	wrong := 0
	for card, items := range r.held {
		for _, bc := range items {
			if onLoan[bc] != card {
				wrong++
				if wrong <= 5 {
					r.t.Errorf("%s was lent to %s; in the database it is on loan to %q", bc, card, onLoan[bc])
				}
			}
		}
	}
	for _, bc := range r.free {
		if card, ok := onLoan[bc]; ok {
			wrong++
			if wrong <= 5 {
				r.t.Errorf("%s was returned; in the database it is on loan to %s", bc, card)
			}
		}
	}
	if wrong > 0 {
		r.t.Errorf("%d books are not where the answers said", wrong)
	}
}

// pct is the p-th percentile (nearest rank) of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string {
	f := float64(d.Microseconds()) / 1000
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f ms", f)
	case f >= 10:
		return fmt.Sprintf("%.1f ms", f)
	}
	return fmt.Sprintf("%.2f ms", f)
}

var rushTypes = []struct{ id, name string }{
	{"93", "93 login"}, {"99", "99 SC status"}, {"63", "63 patron information (PIN)"},
	{"11", "11 checkout (PIN)"}, {"09", "09 checkin"}, {"35", "35 end patron session"},
}

// report is the results as markdown.
func (r *rush) report(dur time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d terminals (%s), each serving a new patron every %s to %s, for %s on the default demo library, PINs and passwords at bcrypt cost %d (%.0f ms a comparison here); "+
		"load average %s at the start, %s at the end. %d patron sessions, %d bcrypt comparisons, %d refused by the comparison pool.\n\n",
		r.terminals, r.accountsText(), r.minGap, r.maxGap, dur, bcrypt.DefaultCost, r.costMs, r.loadStart, r.loadEnd, r.sessions, r.compared, r.poolBusy)
	b.WriteString("| message | count | refused | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, typ := range rushTypes {
		l := slices.Clone(r.lat[typ.id])
		slices.Sort(l)
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s |\n", typ.name, len(l), r.refused[typ.id],
			ms(pct(l, .5)), ms(pct(l, .95)), ms(pct(l, .99)), ms(pct(l, 1)))
	}
	l := slices.Clone(r.restartLat)
	slices.Sort(l)
	fmt.Fprintf(&b, "\nAfter the restart, %d logins sent at the same moment (connect and 93): %d answered 941, %d answered 940, %d failed; "+
		"answered within %s (p50 %s).\n", r.terminals, r.restartOK, r.restartWrong, len(r.restartErrs), ms(pct(l, 1)), ms(pct(l, .5)))
	if len(r.reasons) > 0 {
		b.WriteString("\n| refused | times |\n|---|---:|\n")
		for _, k := range slices.Sorted(maps.Keys(r.reasons)) {
			fmt.Fprintf(&b, "| %s | %d |\n", strings.ReplaceAll(k, "|", "\\|"), r.reasons[k])
		}
	}
	if errs := append(slices.Clone(r.errs), r.restartErrs...); len(errs) > 0 {
		fmt.Fprintf(&b, "\n%d exchanges failed; the first: %s\n", len(errs), errs[0])
	}
	if w := r.logs.warnings(); len(w) > 0 {
		b.WriteString("\n| server warning | times |\n|---|---:|\n")
		for _, k := range slices.Sorted(maps.Keys(w)) {
			fmt.Fprintf(&b, "| %s | %d |\n", k, w[k])
		}
	}
	return b.String()
}

// accept fails the test where the acceptance figures do not hold.
func (r *rush) accept() {
	t := r.t
	total := 0
	for _, n := range r.refused {
		total += n
	}
	if total > 0 {
		t.Errorf("%d messages refused (%v); want none", total, r.refused)
	}
	if r.wrongLogins > 0 {
		t.Errorf("%d logins with the right password answered 940; want none", r.wrongLogins)
	}
	if n := len(r.errs) + len(r.restartErrs); n > 0 {
		t.Errorf("%d exchanges failed; want none", n)
	}
	for _, typ := range rushTypes {
		l := slices.Clone(r.lat[typ.id])
		slices.Sort(l)
		if p := pct(l, .99); p >= rushP99 {
			t.Errorf("%s: p99 %s; want under %s", typ.name, ms(p), ms(rushP99))
		}
	}
	l := slices.Clone(r.restartLat)
	slices.Sort(l)
	if r.restartOK != r.terminals {
		t.Errorf("after the restart %d of %d terminals logged in", r.restartOK, r.terminals)
	}
	if m := pct(l, 1); m >= rushLoginsWithin {
		t.Errorf("after the restart the last login was answered in %s; want within %s", ms(m), ms(rushLoginsWithin))
	}
	if r.sessions < r.terminals {
		t.Errorf("%d patron sessions for %d terminals: fewer than one a terminal", r.sessions, r.terminals)
	}
}

// rushLog is the servers' log: warnings and errors counted by message, and,
// with STACKS_SIP_RUSH_LOG, everything from debug up written to that file.
type rushLog struct {
	mu    sync.Mutex
	warns map[string]int
	file  slog.Handler
}

func newRushLog(t *testing.T) *rushLog {
	l := &rushLog{warns: map[string]int{}}
	if path := os.Getenv(rushLogEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		l.file = slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})
	} else {
		l.file = slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})
	}
	return l
}

func (l *rushLog) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= slog.LevelWarn || l.file.Enabled(ctx, lv)
}

func (l *rushLog) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.warns[rec.Message]++
		l.mu.Unlock()
	}
	if l.file.Enabled(ctx, rec.Level) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.file.Handle(ctx, rec)
	}
	return nil
}

func (l *rushLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *rushLog) WithGroup(string) slog.Handler      { return l }

func (l *rushLog) warnings() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.warns)
}

// loadAverage is the machine's load over 1, 5 and 15 minutes (Linux): on a
// shared machine it says how far to trust a time.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
