package reports

import (
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// Stocktake is the check of one shelf range at a branch: either the items whose
// call numbers fall between From and To (inclusive, compared as text; To covers
// every call number that starts with it, so "FIC C" to "FIC D" takes in "FIC
// DAVIS"), or, when Location is set, the items shelved at that location (Koha's
// inventory by location): then From and To are empty.
type Stocktake struct {
	ID         int64
	BranchID   int64
	BranchName string
	From, To   string
	Location   string
	StartedAt  time.Time
	Scans      int
}

// ByLocation reports whether the stocktake checks a shelving location rather
// than a call number range.
func (s Stocktake) ByLocation() bool { return s.Location != "" }

// Range describes the shelf range for people: "FIC A to FIC C at Central", or
// "Reference at Central".
func (s Stocktake) Range() string {
	if s.ByLocation() {
		return s.Location + " at " + s.BranchName
	}
	return s.From + " to " + s.To + " at " + s.BranchName
}

// The outcomes of a stocktake scan.
const (
	ScanOnShelf    = "on_shelf"    // on the right shelf
	ScanWrongShelf = "wrong_shelf" // belongs in another range or branch
	ScanOnLoan     = "on_loan"     // on loan, yet on the shelf: check it in
	ScanFound      = "found"       // marked lost or missing, and here after all
	ScanElsewhere  = "elsewhere"   // in transit or waiting on the hold shelf
	ScanUnknown    = "unknown"     // no item has the barcode
)

// StocktakeScan is one scan and what it says about the item.
type StocktakeScan struct {
	Barcode    string
	ItemID     int64
	Title      string
	CallNumber string
	// Location is the item's shelving location.
	Location string
	// Branch is the item's home branch.
	Branch  string
	Status  string
	Outcome string
	At      time.Time
}

// Message says what staff should know about the scan.
func (s StocktakeScan) Message() string {
	switch s.Outcome {
	case ScanOnShelf:
		return "On the right shelf"
	case ScanWrongShelf:
		if s.Location != "" {
			return "Wrong shelf: belongs at " + s.Branch + ", " + s.Location + ", " + s.CallNumber
		}
		return "Wrong shelf: belongs at " + s.Branch + ", " + s.CallNumber
	case ScanOnLoan:
		return "On loan, but on the shelf: check it in"
	case ScanFound:
		return "Was " + catalog.StatusLabel(s.Status) + ", found on the shelf: check it in"
	case ScanElsewhere:
		return catalog.StatusLabel(s.Status) + ": should not be on the shelf"
	default:
		return "No item has barcode " + s.Barcode + ": set it aside"
	}
}

// StocktakeInput starts a stocktake: a branch, and either a call number range
// (From, To) or a shelving location.
type StocktakeInput struct {
	BranchID int64
	From, To string
	Location string
}

// startStocktake begins the stocktake of a shelf range or of a shelving location.
func startStocktake(tx *db.Tx, actor stacks.Actor, in StocktakeInput) (int64, error) {
	in.From, in.To, in.Location = strings.TrimSpace(in.From), strings.TrimSpace(in.To), strings.TrimSpace(in.Location)
	if in.To == "" {
		in.To = in.From
	}
	switch {
	case in.BranchID == 0:
		return 0, stacks.FieldErrorf("branch", stacks.EINVALID, "Choose the branch whose shelf you are checking.")
	case in.Location != "" && in.From != "":
		return 0, stacks.FieldErrorf("location", stacks.EINVALID, "Choose either a call number range or a location, not both: clear one of them.")
	case in.Location != "":
		return startByLocation(tx, actor, in)
	case in.From == "":
		return 0, stacks.FieldErrorf("from", stacks.EINVALID, "Enter the call number at the start of the shelf, for example FIC A, or choose a location.")
	case CallNumberKey(in.To) < CallNumberKey(in.From):
		return 0, stacks.FieldErrorf("to", stacks.EINVALID, "The shelf ends (%s) before it starts (%s): swap them.", in.To, in.From)
	case badText(in.From, ""):
		return 0, stacks.FieldErrorf("from", stacks.EINVALID, "The call number holds characters that are not text: type it again.")
	case badText(in.To, ""):
		return 0, stacks.FieldErrorf("to", stacks.EINVALID, "The call number holds characters that are not text: type it again.")
	case len(in.From) > 100 || len(in.To) > 100:
		return 0, stacks.FieldErrorf("from", stacks.EINVALID, "Call numbers are under 100 characters.")
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM branches WHERE id = ?`, in.BranchID).Scan(&n); err != nil {
		return 0, err
	} else if n == 0 {
		return 0, stacks.FieldErrorf("branch", stacks.EINVALID, "Choose the branch from the list.")
	}
	return insertStocktake(tx, actor, in)
}

// startByLocation begins the stocktake of a location, which must be in use at
// the branch: a location no item there has is a typing slip or the wrong branch.
func startByLocation(tx *db.Tx, actor stacks.Actor, in StocktakeInput) (int64, error) {
	in.From, in.To = "", ""
	if badText(in.Location, "") || len(in.Location) > 100 {
		return 0, stacks.FieldErrorf("location", stacks.EINVALID, "Choose the location from the list.")
	}
	var branch sql.NullString
	var used bool
	if err := tx.QueryRow(`SELECT (SELECT name FROM branches WHERE id = ?),
			EXISTS (SELECT 1 FROM items WHERE home_branch_id = ? AND location = ? AND location <> '')`,
		in.BranchID, in.BranchID, in.Location).Scan(&branch, &used); err != nil {
		return 0, fmt.Errorf("start stocktake: %w", err)
	}
	switch {
	case !branch.Valid:
		return 0, stacks.FieldErrorf("branch", stacks.EINVALID, "Choose the branch from the list.")
	case !used:
		return 0, stacks.FieldErrorf("location", stacks.EINVALID, "No item at %s is shelved at %q: choose a location listed for %s.", branch.String, in.Location, branch.String)
	}
	return insertStocktake(tx, actor, in)
}

func insertStocktake(tx *db.Tx, actor stacks.Actor, in StocktakeInput) (int64, error) {
	var staffID any
	if actor.StaffID != 0 {
		staffID = actor.StaffID
	}
	var id int64
	err := tx.QueryRow(`INSERT INTO stocktakes (branch_id, call_from, call_to, location, staff_id, started_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		in.BranchID, in.From, in.To, in.Location, staffID, db.FormatTime(tx.Now())).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("start stocktake: %w", err)
	}
	return id, nil
}

// BranchLocations is the shelving locations in use at one branch, in order.
type BranchLocations struct {
	BranchID  int64
	Locations []string
}

// stocktakeLocations lists the shelving locations in use at each branch, for
// the stocktake form's choice, in one statement (through items_location).
func stocktakeLocations(tx *db.Tx) ([]BranchLocations, error) {
	rows, err := tx.Query(`SELECT DISTINCT home_branch_id, location FROM items WHERE location <> ''
		ORDER BY home_branch_id, location`)
	if err != nil {
		return nil, fmt.Errorf("stocktake locations: %w", err)
	}
	defer rows.Close()
	var out []BranchLocations
	for rows.Next() {
		var b int64
		var loc string
		if err := rows.Scan(&b, &loc); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].BranchID != b {
			out = append(out, BranchLocations{BranchID: b})
		}
		out[len(out)-1].Locations = append(out[len(out)-1].Locations, loc)
	}
	return out, rows.Err()
}

// FindStocktake returns a stocktake.
func FindStocktake(tx *db.Tx, id int64) (Stocktake, error) {
	var s Stocktake
	var at db.Time
	err := tx.QueryRow(`SELECT s.id, s.branch_id, b.name, s.call_from, s.call_to, s.location, s.started_at,
			(SELECT count(*) FROM stocktake_scans WHERE stocktake_id = s.id)
		FROM stocktakes s JOIN branches b ON b.id = s.branch_id WHERE s.id = ?`, id).
		Scan(&s.ID, &s.BranchID, &s.BranchName, &s.From, &s.To, &s.Location, &at, &s.Scans)
	if errors.Is(err, sql.ErrNoRows) {
		return s, stacks.Errorf(stacks.ENOTFOUND, "There is no stocktake %d. Start one on the Stocktake page.", id)
	} else if err != nil {
		return s, fmt.Errorf("stocktake %d: %w", id, err)
	}
	s.StartedAt = at.Time
	return s, nil
}

// recentStocktakes lists the latest stocktakes, newest first.
func recentStocktakes(tx *db.Tx, limit int) ([]Stocktake, error) {
	rows, err := tx.Query(`SELECT s.id, s.branch_id, b.name, s.call_from, s.call_to, s.location, s.started_at,
			(SELECT count(*) FROM stocktake_scans WHERE stocktake_id = s.id)
		FROM stocktakes s JOIN branches b ON b.id = s.branch_id ORDER BY s.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("stocktakes: %w", err)
	}
	defer rows.Close()
	var out []Stocktake
	for rows.Next() {
		var s Stocktake
		var at db.Time
		if err := rows.Scan(&s.ID, &s.BranchID, &s.BranchName, &s.From, &s.To, &s.Location, &at, &s.Scans); err != nil {
			return nil, err
		}
		s.StartedAt = at.Time
		out = append(out, s)
	}
	return out, rows.Err()
}

// rangeEnd is the upper bound of a shelf range: every call number that starts
// with to sorts below to followed by the highest character.
func rangeEnd(to string) string { return to + "\U0010FFFF" }

// holds reports whether a call number is in the stocktake's range, in shelf
// order (CallNumberKey): QA 100 is not between QA 1 and QA 99, fic b is between
// FIC A and FIC C.
func (s Stocktake) holds(callNumber string) bool {
	k := CallNumberKey(callNumber)
	return k >= CallNumberKey(s.From) && k < rangeEnd(CallNumberKey(s.To))
}

// shelfSQL is the SQL condition "item i may be on the stocktake's shelf", with
// its arguments: at the branch, and at the location for a stocktake by
// location. A call number range is checked in Go (holds): shelf order is
// CallNumberKey, which neither engine's SQL has, and Go's byte order of the
// keys is the same on both.
func (s Stocktake) shelfSQL() (string, []any) {
	if s.ByLocation() {
		// location <> '' lets SQLite use the partial index items_location.
		return `(i.home_branch_id = ? AND i.location = ? AND i.location <> '')`, []any{s.BranchID, s.Location}
	}
	return `i.home_branch_id = ?`, []any{s.BranchID}
}

// classify says what a scanned item's state means on this shelf.
func (s Stocktake) classify(sc *StocktakeScan, homeBranchID int64) {
	switch {
	case sc.ItemID == 0:
		sc.Outcome = ScanUnknown
	case sc.Status == "on_loan":
		sc.Outcome = ScanOnLoan
	case sc.Status == "lost" || sc.Status == "missing":
		sc.Outcome = ScanFound
	case sc.Status == "in_transit" || sc.Status == "on_hold_shelf":
		sc.Outcome = ScanElsewhere
	case homeBranchID != s.BranchID:
		sc.Outcome = ScanWrongShelf
	case s.ByLocation() && sc.Location != s.Location:
		sc.Outcome = ScanWrongShelf
	case !s.ByLocation() && !s.holds(sc.CallNumber):
		sc.Outcome = ScanWrongShelf
	default:
		sc.Outcome = ScanOnShelf
	}
}

// scan records a barcode scanned on the stocktake's shelf, keeps the item's
// last-seen time, and says what the scan means.
func scan(tx *db.Tx, stocktakeID int64, barcode string) (StocktakeScan, error) {
	s, err := FindStocktake(tx, stocktakeID)
	if err != nil {
		return StocktakeScan{}, err
	}
	code, err := catalog.NormalizeBarcode(barcode)
	if err != nil {
		return StocktakeScan{}, err
	}
	sc := StocktakeScan{Barcode: code, At: tx.Now()}
	var home int64
	err = tx.QueryRow(`SELECT i.id, r.title, i.call_number, i.location, b.name, i.home_branch_id, i.status
		FROM items i JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id
		WHERE i.barcode = ?`, code).Scan(&sc.ItemID, &sc.Title, &sc.CallNumber, &sc.Location, &sc.Branch, &home, &sc.Status)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return sc, fmt.Errorf("stocktake scan: %w", err)
	}
	var itemID any
	if sc.ItemID != 0 {
		itemID = sc.ItemID
		if _, err := tx.Exec(`UPDATE items SET last_seen_at = ? WHERE id = ?`, db.FormatTime(sc.At), sc.ItemID); err != nil {
			return sc, fmt.Errorf("stocktake scan: %w", err)
		}
	}
	if _, err := tx.Exec(`INSERT INTO stocktake_scans (stocktake_id, item_id, barcode, at) VALUES (?, ?, ?, ?)`,
		s.ID, itemID, code, db.FormatTime(sc.At)); err != nil {
		return sc, fmt.Errorf("stocktake scan: %w", err)
	}
	s.classify(&sc, home)
	return sc, nil
}

// checkCheckin allows a checkin from the stocktake's results only for an item
// scanned in that stocktake and on loan, lost or missing now: the results page
// offers the button for those, and a post for another barcode (or another
// stocktake) is refused rather than checking in whatever it names.
func checkCheckin(tx *db.Tx, stocktakeID int64, barcode string) error {
	s, err := FindStocktake(tx, stocktakeID)
	if err != nil {
		return err
	}
	code, err := catalog.NormalizeBarcode(barcode)
	if err != nil {
		return err
	}
	var status string
	err = tx.QueryRow(`SELECT i.status FROM stocktake_scans sc JOIN items i ON i.id = sc.item_id
		WHERE sc.stocktake_id = ? AND sc.barcode = ? LIMIT 1`, s.ID, code).Scan(&status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return stacks.FieldErrorf("barcode", stacks.EINVALID, "Item %s was not scanned in this stocktake (%s): check it in at Check in.", code, s.Range())
	case err != nil:
		return fmt.Errorf("stocktake checkin: %w", err)
	case status != "on_loan" && status != "lost" && status != "missing":
		return stacks.FieldErrorf("barcode", stacks.EINVALID, "Item %s is %s, not on loan, lost or missing: there is nothing to check in.", code, catalog.StatusLabel(status))
	}
	return nil
}

// MissingItem is an item expected on the shelf that no scan found.
type MissingItem struct {
	ItemID     int64
	Barcode    string
	Title      string
	CallNumber string
	// LastSeen is when a stocktake last saw the item (zero: never).
	LastSeen time.Time
}

// StocktakeResult is what a stocktake found.
type StocktakeResult struct {
	Stocktake
	// Expected is how many items should be on the shelf: in the range, at home at
	// the branch, and available.
	Expected int
	// OnShelf counts the distinct items scanned on the right shelf.
	OnShelf int
	Missing []MissingItem
	// Wrong are the scans of items from another shelf; OnLoan those of items on
	// loan; Found those of items marked lost or missing; Elsewhere those of items
	// in transit or on the hold shelf; Unknown those of barcodes of no item.
	Wrong, OnLoan, Found, Elsewhere, Unknown []StocktakeScan
	// Scans are the latest scans, newest first.
	Scans []StocktakeScan
}

// results works out what the stocktake found, in two statements: the scans
// (each item once, with its current state: an item checked in since it was
// scanned no longer shows as on loan), and the available items that may be on
// the shelf, each with whether it was scanned, of which Go keeps those in the
// call number range (the expected count) and the unscanned ones among them (the
// missing items, in shelf order).
func results(tx *db.Tx, id int64) (StocktakeResult, error) {
	s, err := FindStocktake(tx, id)
	if err != nil {
		return StocktakeResult{}, err
	}
	res := StocktakeResult{Stocktake: s}
	cond, args := s.shelfSQL()
	rows, err := tx.Query(`SELECT sc.barcode, coalesce(i.id, 0), coalesce(r.title, ''), coalesce(i.call_number, ''), coalesce(i.location, ''),
			coalesce(b.name, ''), coalesce(i.home_branch_id, 0), coalesce(i.status, ''), sc.at
		FROM stocktake_scans sc LEFT JOIN items i ON i.id = sc.item_id LEFT JOIN records r ON r.id = i.record_id
		LEFT JOIN branches b ON b.id = i.home_branch_id
		WHERE sc.stocktake_id = ? ORDER BY sc.id DESC`, id)
	if err != nil {
		return res, fmt.Errorf("stocktake scans: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var sc StocktakeScan
		var home int64
		var at db.Time
		if err := rows.Scan(&sc.Barcode, &sc.ItemID, &sc.Title, &sc.CallNumber, &sc.Location, &sc.Branch, &home, &sc.Status, &at); err != nil {
			return res, err
		}
		sc.At = at.Time
		s.classify(&sc, home)
		res.Scans = append(res.Scans, sc)
		if seen[sc.Barcode] {
			continue
		}
		seen[sc.Barcode] = true
		switch sc.Outcome {
		case ScanOnShelf:
			res.OnShelf++
		case ScanWrongShelf:
			res.Wrong = append(res.Wrong, sc)
		case ScanOnLoan:
			res.OnLoan = append(res.OnLoan, sc)
		case ScanFound:
			res.Found = append(res.Found, sc)
		case ScanElsewhere:
			res.Elsewhere = append(res.Elsewhere, sc)
		default:
			res.Unknown = append(res.Unknown, sc)
		}
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	items, err := tx.Query(`SELECT i.id, i.barcode, r.title, i.call_number, i.last_seen_at,
			EXISTS (SELECT 1 FROM stocktake_scans sc WHERE sc.stocktake_id = ? AND sc.item_id = i.id)
		FROM items i JOIN records r ON r.id = i.record_id
		WHERE `+cond+` AND i.status = 'available'`, append([]any{id}, args...)...)
	if err != nil {
		return res, fmt.Errorf("stocktake missing items: %w", err)
	}
	defer items.Close()
	var keys []string
	for items.Next() {
		var m MissingItem
		var seen db.NullTime
		var scanned bool
		if err := items.Scan(&m.ItemID, &m.Barcode, &m.Title, &m.CallNumber, &seen, &scanned); err != nil {
			return res, err
		}
		if !s.ByLocation() && !s.holds(m.CallNumber) {
			continue
		}
		res.Expected++
		if scanned {
			continue
		}
		m.LastSeen = seen.Time
		res.Missing = append(res.Missing, m)
		keys = append(keys, CallNumberKey(m.CallNumber))
	}
	if err := items.Err(); err != nil {
		return res, err
	}
	sort.Sort(shelfOrder{res.Missing, keys})
	return res, nil
}

// shelfOrder sorts missing items in shelf order: by call number key, then
// barcode.
type shelfOrder struct {
	items []MissingItem
	keys  []string
}

func (o shelfOrder) Len() int { return len(o.items) }
func (o shelfOrder) Less(i, j int) bool {
	if o.keys[i] != o.keys[j] {
		return o.keys[i] < o.keys[j]
	}
	return o.items[i].Barcode < o.items[j].Barcode
}
func (o shelfOrder) Swap(i, j int) {
	o.items[i], o.items[j] = o.items[j], o.items[i]
	o.keys[i], o.keys[j] = o.keys[j], o.keys[i]
}
