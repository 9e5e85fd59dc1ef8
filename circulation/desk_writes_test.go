package circulation_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// TestDeskWritesUnchangedByReports proves that the reports add nothing
// to the desk's write path: a checkout and a checkin run the same statements as before
// the reports came, and the tables they write carry the same triggers and
// indexes (a trigger or an index is work inside the same statement, which
// db.Stats does not count). The report statistics are rolled up from the loans in
// the background instead (reports.Rollup, migration 0012).
//
// The schema's catalogue is engine-specific, so the test reads the one of the
// engine it runs on (dbtest.Engine): sqlite_master on SQLite, pg_indexes and
// pg_trigger on PostgreSQL. The named indexes and triggers are the same on
// both but one, PostgreSQL's items_available (below); the automatic ones
// differ (SQLite's sqlite_autoindex_* for a UNIQUE column, PostgreSQL's *_key
// for one and *_pkey for each primary key, which SQLite's INTEGER PRIMARY KEY,
// the rowid, does without).
func TestDeskWritesUnchangedByReports(t *testing.T) {
	e := newEnv(t)
	barcode := e.queryString(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE t.code = 'BOOK' AND i.status = 'available' AND i.home_branch_id = 1 AND i.current_branch_id = 1
		  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id)
		ORDER BY i.id LIMIT 1`)
	patronID := e.patronID(e.goodPatrons(2)[0])

	type kinds struct{ statements, selects, inserts, updates, deletes int64 }
	count := func(s *db.Stats) kinds {
		sel, ins, upd, del := s.Kinds()
		return kinds{s.Statements(), sel, ins, upd, del}
	}
	ctx, out := db.WithStats(context.Background())
	if _, err := e.svc.Checkout(ctx, circulation.CheckoutRequest{Actor: e.desk, PatronID: patronID, Barcode: barcode}); err != nil {
		t.Fatal(err)
	}
	ctx, in := db.WithStats(context.Background())
	r, err := e.svc.Checkin(ctx, circulation.CheckinRequest{Actor: e.desk, Barcode: barcode})
	if err != nil {
		t.Fatal(err)
	}
	if !r.WasOnLoan || r.Hold != nil || r.TransferTo != nil {
		t.Fatalf("checkin: %+v", r)
	}
	// The counts on main at f48f379 and 4dbc45a (before the reports), from this same
	// test run there: a checkout 9 statements (7 SELECT, 1 INSERT, 1 UPDATE), a
	// checkin 6 (3 SELECT, 1 INSERT, 2 UPDATE).
	if got, want := count(out), (kinds{9, 7, 1, 1, 0}); got != want {
		t.Errorf("checkout ran %+v, main ran %+v", got, want)
	}
	if got, want := count(in), (kinds{6, 3, 1, 2, 0}); got != want {
		t.Errorf("checkin ran %+v, main ran %+v", got, want)
	}

	// The triggers and indexes on the tables a checkout or checkin writes: main's
	// (listed from this query there), and the reports' on items and patrons, none of
	// which a checkout or checkin writes. The desk changes an item's status,
	// current_branch_id, transit_to_id and updated_at only; items_gone is partial
	// on lost, missing and withdrawn, which neither a checkout nor a checkin's
	// usual item is (as items_in_transit, main's, holds only items in transit).
	want := []string{
		"index checkins checkins_at", "index checkins checkins_batch", "index checkins checkins_item",
		// Partial on the checkins of a desk's list that need action and are not
		// acknowledged: written by such a checkin only (a plain return writes none).
		"index checkins checkins_unacknowledged",
		"index holds holds_open_record", "index holds holds_patron", "index holds holds_trapped_item",
		"index items items_gone", // reports: partial, lost/missing/withdrawn
		"index items items_in_transit",
		"index items items_last_borrowed", // reports: written by reports.Rollup only
		// Stocktake by location (0016): partial on a location, keyed on
		// home branch, location and call number, which only the item form and an
		// import change: a checkout or checkin writes none of them.
		"index items items_location",
		// Search at 100,000 titles (0021): replaces items_record
		// (record_id alone) with record_id, status, item type and home branch,
		// so a checkout and a checkin, which change the status, rewrite the
		// item's entry in it: the one index entry the search's availability
		// costs the desk (docs/performance.md).
		"index items items_record_status",
		"index items items_shelf", // reports: home branch, call number
		// Money: ledger_loan is written by a checkin's overdue fine, as
		// ledger_patron is; the other two are partial on payments and reversals.
		"index ledger ledger_desk_day", "index ledger ledger_loan", "index ledger ledger_patron", "index ledger ledger_reverses",
		"index loans loans_claimed_returned", // partial, claims returned only
		"index loans loans_current_item", "index loans loans_current_patron", "index loans loans_patron_history",
		// Privacy: the history not yet anonymised; a checkin adds its
		// loan (returned_at set), the daily anonymisation takes it out.
		"index loans loans_returned_named",
		"index patrons patrons_created",     // reports: patrons are not written at the desk
		"index patrons patrons_external_id", // patron loads; not written at the desk
		"index patrons patrons_name",
		// Since migration 0011 (the OPAC's record dates).
		"trigger items items_deleted_redate", "trigger items items_inserted_redate", "trigger items items_updated_redate",
	}
	// The automatic indexes: the unique barcode and card on both engines, and on
	// PostgreSQL the primary keys.
	catalogue := `SELECT type || ' ' || tbl_name || ' ' || name FROM sqlite_master
		WHERE type IN ('trigger', 'index') AND tbl_name IN ('loans', 'items', 'patrons', 'ledger', 'checkins', 'holds')`
	want = append(want, "index items sqlite_autoindex_items_1", "index patrons sqlite_autoindex_patrons_1")
	if dbtest.Engine() == db.Postgres {
		catalogue = `SELECT 'index ' || tablename || ' ' || indexname FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename IN ('loans', 'items', 'patrons', 'ledger', 'checkins', 'holds')
			UNION ALL
			SELECT 'trigger ' || c.relname || ' ' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
			  AND c.relname IN ('loans', 'items', 'patrons', 'ledger', 'checkins', 'holds')`
		want = append(want[:len(want)-2], "index items items_barcode_key", "index patrons patrons_card_key",
			"index checkins checkins_pkey", "index holds holds_pkey", "index items items_pkey",
			"index ledger ledger_pkey", "index loans loans_pkey", "index patrons patrons_pkey",
			// A search filtered to the shelf (migration 0024, on
			// PostgreSQL only): partial on the available copies, so a
			// checkin, which puts its copy back on the shelf, writes one
			// entry in it; a checkout writes none.
			"index items items_available",
			// A withdrawal's date and reason follow the item's status, whatever
			// changes it (migration 0034): a checkout's or a checkin's status
			// change is neither to nor from withdrawn, so it dates or clears
			// nothing: the triggers' WHEN is false, and PostgreSQL's
			// function is not called.
			"trigger items items_withdrawal")
	} else {
		want = append(want, "trigger items items_withdrawal_cleared", "trigger items items_withdrawal_dated")
	}
	got := e.queryStrings(catalogue)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("triggers and indexes on the desk's tables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
