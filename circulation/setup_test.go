package circulation_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/passwords"
)

// keepCirculation makes newEnv's service keep the preferences, rules and
// calendars in memory, as a server's does (the tests run one at a time).
var keepCirculation bool

// env is a demo library with its circulation service, the desk's actor at Central
// and a clock the test moves.
type env struct {
	tb    testing.TB
	d     *db.DB
	svc   *circulation.Service
	clock *dbtest.Clock
	desk  stacks.Actor
}

// newEnv creates a small demo library (100 titles, 30 patrons) on dbtest.Monday.
func newEnv(tb testing.TB) *env {
	return newEnvWith(tb, db.Options{}, demo.Options{Titles: 100, Patrons: 30})
}

func newEnvWith(tb testing.TB, dopt db.Options, opt demo.Options) *env {
	tb.Helper()
	d := openDemo(tb, dopt, opt)
	c := dbtest.NewClock(dbtest.Monday)
	d.Now = c.Now
	prefs := library.NewPreferenceCache(keepCirculation)
	e := &env{tb: tb, d: d, svc: circulation.NewService(d, prefs), clock: c}
	e.desk = stacks.Actor{StaffID: e.queryInt(`SELECT id FROM staff_users WHERE username = 'desk'`), Name: "desk", BranchID: 1}
	return e
}

// openDemo opens a copy of the demo library of size opt created at dbtest.Monday
// (demotest: a file copy on SQLite, a copy of a template database on
// PostgreSQL).
func openDemo(tb testing.TB, dopt db.Options, opt demo.Options) *db.DB {
	tb.Helper()
	return demotest.Demo(tb, opt, dbtest.Monday, dopt)
}

func TestMain(m *testing.M) {
	// demo.Create hashes the desk's and the administrator's passwords: at bcrypt's
	// real cost that is seconds a hash under the race detector, for every template.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

// actorAt returns the desk's actor working at another branch.
func (e *env) actorAt(branchID int64) stacks.Actor {
	a := e.desk
	a.BranchID = branchID
	return a
}

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

// insert runs an INSERT and returns the new row's id (read with RETURNING, which
// both engines run; PostgreSQL's driver has no LastInsertId).
func (e *env) insert(query string, args ...any) int64 {
	e.tb.Helper()
	var id int64
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query+" RETURNING id", args...).Scan(&id)
	})
	if err != nil {
		e.tb.Fatalf("%s: %v", query, err)
	}
	return id
}

// queryInt runs a query that returns one integer (NULL reads as 0).
func (e *env) queryInt(query string, args ...any) int64 {
	e.tb.Helper()
	var n sql.NullInt64
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&n)
	})
	if err != nil {
		e.tb.Fatalf("%s: %v", query, err)
	}
	return n.Int64
}

// queryString runs a query that returns one text value (NULL reads as "").
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

// queryStrings runs a query that returns one text column.
func (e *env) queryStrings(query string, args ...any) []string {
	e.tb.Helper()
	var out []string
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		e.tb.Fatalf("%s: %v", query, err)
	}
	return out
}

func (e *env) patronID(card string) int64 {
	e.tb.Helper()
	id := e.queryInt(`SELECT id FROM patrons WHERE card = ?`, card)
	if id == 0 {
		e.tb.Fatalf("no patron %s", card)
	}
	return id
}

func (e *env) itemID(barcode string) int64 {
	e.tb.Helper()
	id := e.queryInt(`SELECT id FROM items WHERE barcode = ?`, barcode)
	if id == 0 {
		e.tb.Fatalf("no item %s", barcode)
	}
	return id
}

func (e *env) itemStatus(barcode string) string {
	e.tb.Helper()
	return e.queryString(`SELECT status FROM items WHERE barcode = ?`, barcode)
}

func (e *env) recordID(barcode string) int64 {
	e.tb.Helper()
	return e.queryInt(`SELECT record_id FROM items WHERE barcode = ?`, barcode)
}

// currentLoans counts the current loans of an item.
func (e *env) currentLoans(barcode string) int64 {
	e.tb.Helper()
	return e.queryInt(`SELECT count(*) FROM loans WHERE item_id = ? AND returned_at IS NULL`, e.itemID(barcode))
}

// balance is what a patron owes.
func (e *env) balance(card string) int64 {
	e.tb.Helper()
	return e.queryInt(`SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = ?`, e.patronID(card))
}

// checkout lends barcode to the patron with card at Central, confirming the codes.
func (e *env) checkout(card, barcode string, confirm ...string) (circulation.CheckoutResult, error) {
	e.tb.Helper()
	return e.svc.Checkout(context.Background(), circulation.CheckoutRequest{
		Actor: e.desk, PatronID: e.patronID(card), Barcode: barcode, Confirm: confirm,
	})
}

func (e *env) mustCheckout(card, barcode string, confirm ...string) circulation.CheckoutResult {
	e.tb.Helper()
	res, err := e.checkout(card, barcode, confirm...)
	if err != nil {
		e.tb.Fatalf("checkout %s to %s: %v", barcode, card, err)
	}
	return res
}

// checkinAt checks barcode in at branchID.
func (e *env) checkinAt(branchID int64, barcode, batch string) (circulation.CheckinResult, error) {
	e.tb.Helper()
	return e.svc.Checkin(context.Background(), circulation.CheckinRequest{Actor: e.actorAt(branchID), Barcode: barcode, Batch: batch})
}

func (e *env) mustCheckin(barcode string) circulation.CheckinResult {
	e.tb.Helper()
	res, err := e.checkinAt(1, barcode, "")
	if err != nil {
		e.tb.Fatalf("checkin %s: %v", barcode, err)
	}
	return res
}

// addHold inserts an open hold on the record of barcode for the patron with card,
// pickup at branch, and returns its id. Queued holds take the next priority.
func (e *env) addHold(card, barcode string, pickup int64, itemLevel bool) int64 {
	e.tb.Helper()
	rec := e.recordID(barcode)
	var item any
	if itemLevel {
		item = e.itemID(barcode)
	}
	prio := e.queryInt(`SELECT coalesce(max(priority), 0) + 1 FROM holds WHERE record_id = ? AND status = 'queued'`, rec)
	return e.insert(`INSERT INTO holds (record_id, item_id, patron_id, pickup_branch_id, placed_at, priority, status)
		VALUES (?, ?, ?, ?, ?, ?, 'queued')`, rec, item, e.patronID(card), pickup, db.FormatTime(e.clock.Now().Add(-time.Hour)), prio)
}

// addCopy adds another available copy of the record of barcode at branch.
func (e *env) addCopy(barcode, newBarcode string, branch int64) {
	e.tb.Helper()
	e.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, status, created_at, updated_at)
		SELECT ?, record_id, ?, ?, item_type_id, call_number, 'available', created_at, updated_at FROM items WHERE barcode = ?`,
		newBarcode, branch, branch, barcode)
}

// freeItem returns the barcode of an available generated item of item type code
// whose home is branch and whose record has no open holds.
func (e *env) freeItem(typeCode string, branch int64, skip ...string) string {
	e.tb.Helper()
	for _, b := range e.queryStrings(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE t.code = ? AND i.home_branch_id = ? AND i.current_branch_id = i.home_branch_id AND i.status = 'available'
		  AND i.barcode LIKE '39999%'
		  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id`, typeCode, branch) {
		if !contains(skip, b) {
			return b
		}
	}
	e.tb.Fatalf("no free %s item at branch %d", typeCode, branch)
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// auditCount counts audit log entries of an action.
func (e *env) auditCount(action string) int64 {
	e.tb.Helper()
	return e.queryInt(`SELECT count(*) FROM audit_log WHERE action = ?`, action)
}

// wantBlocked checks that err is a *BlockedError with exactly the codes, and that
// Refused says refused.
func wantBlocked(tb testing.TB, err error, refused bool, codes ...string) *circulation.BlockedError {
	tb.Helper()
	var b *circulation.BlockedError
	if !errors.As(err, &b) {
		tb.Fatalf("err = %v, want a *BlockedError with %v", err, codes)
	}
	if got := strings.Join(b.Codes(), ","); got != strings.Join(codes, ",") {
		tb.Fatalf("block codes = %s, want %s (%v)", got, strings.Join(codes, ","), b)
	}
	if b.Refused() != refused {
		tb.Fatalf("Refused() = %v, want %v (%v)", b.Refused(), refused, b)
	}
	return b
}

// wantCode checks that err carries the stacks error code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := stacks.ErrorCode(err); got != code {
		tb.Fatalf("err = %v (code %q), want code %q", err, got, code)
	}
}

// wantContains checks that s says each of the words.
func wantContains(tb testing.TB, s string, words ...string) {
	tb.Helper()
	for _, w := range words {
		if !strings.Contains(s, w) {
			tb.Errorf("%q does not say %q", s, w)
		}
	}
}

// at parses a UTC instant "2006-01-02 15:04".
func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}
