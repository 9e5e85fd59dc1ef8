package catalog

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// RecordInput is what staff type to describe a record by hand: a simple form, not a
// MARC editor. Validate normalizes it in place.
type RecordInput struct {
	Title     string
	Author    string
	ISBN      string
	Publisher string
	// Year is the year of publication, empty when unknown.
	Year string
	// Subjects are subject headings, one per line.
	Subjects string
	// Base is the version of the record's MARC the form showed (its latest
	// when the form was read; 0 when it had none). A save writes the form's
	// changes through against that version, so that what someone else saved
	// since, in fields the form did not change, stays.
	Base int
}

// Field limits: generous enough for the long titles and headings of imported
// records (which staff may edit), small enough that a pasted document is refused.
const (
	maxTitle      = 1000
	maxAuthor     = 500
	maxPublisher  = 500
	maxSubject    = 500
	maxSubjects   = 100
	maxCallNumber = 100
	maxLocation   = 40
	maxPriceCents = 100_000_00
)

// Validate trims the fields and checks them. It keeps the ISBN without hyphens or
// spaces, as the search index and the import store it, and the subjects one per
// line without blank lines. The error, if any, is a *stacks.Error whose Field names
// the form field to fix: title, author, isbn, publisher, year or subjects.
//
// An ISBN's check digit is not verified: books are printed with wrong ones, and the
// catalogue must still describe them as printed.
func (in *RecordInput) Validate() error {
	in.Title = strings.TrimSpace(in.Title)
	in.Author = strings.TrimSpace(in.Author)
	in.Publisher = strings.TrimSpace(in.Publisher)
	in.Year = strings.TrimSpace(in.Year)
	in.ISBN = strings.ToUpper(strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, in.ISBN))

	for _, f := range []struct{ field, value string }{
		{"title", in.Title}, {"author", in.Author}, {"isbn", in.ISBN},
		{"publisher", in.Publisher}, {"year", in.Year}, {"subjects", in.Subjects},
	} {
		if !utf8.ValidString(f.value) {
			return stacks.FieldErrorf(f.field, stacks.EINVALID, "This field contains characters that are not valid text; type it again.")
		}
		if i := strings.IndexFunc(f.value, notXMLChar); i >= 0 {
			r, _ := utf8.DecodeRuneInString(f.value[i:])
			return stacks.FieldErrorf(f.field, stacks.EINVALID, "This field contains a character (%U) that the catalogue cannot store or export; delete it and type the text again.", r)
		}
	}
	subjects, err := subjectLines(in.Subjects)
	if err != nil {
		return err
	}
	in.Subjects = strings.Join(subjects, "\n")

	switch {
	case in.Title == "":
		return stacks.FieldErrorf("title", stacks.EINVALID, "Enter the title, as on the title page.")
	case utf8.RuneCountInString(in.Title) > maxTitle || hasControl(in.Title):
		return stacks.FieldErrorf("title", stacks.EINVALID, "Enter a title of at most %d characters on one line.", maxTitle)
	case utf8.RuneCountInString(in.Author) > maxAuthor || hasControl(in.Author):
		return stacks.FieldErrorf("author", stacks.EINVALID, "Enter an author of at most %d characters on one line, or leave the field empty.", maxAuthor)
	case in.ISBN != "" && !validISBN(in.ISBN):
		return stacks.FieldErrorf("isbn", stacks.EINVALID, "An ISBN has 10 or 13 digits (an ISBN-10 may end in X); hyphens and spaces are ignored. Leave the field empty if the book has none.")
	case utf8.RuneCountInString(in.Publisher) > maxPublisher || hasControl(in.Publisher):
		return stacks.FieldErrorf("publisher", stacks.EINVALID, "Enter a publisher of at most %d characters on one line, or leave the field empty.", maxPublisher)
	}
	if _, ok := parseYear(in.Year); !ok {
		return stacks.FieldErrorf("year", stacks.EINVALID, "Enter the year of publication as a number from 1 to 9999, for example 1969, or leave the field empty.")
	}
	return nil
}

// subjectLines splits subject headings typed one per line (a browser sends CR LF),
// dropping blank lines.
func subjectLines(s string) ([]string, error) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case hasControl(line):
			return nil, stacks.FieldErrorf("subjects", stacks.EINVALID, "Subjects may not contain tabs or other control characters; type one heading per line.")
		case utf8.RuneCountInString(line) > maxSubject:
			return nil, stacks.FieldErrorf("subjects", stacks.EINVALID, "A subject heading can be at most %d characters long; put each heading on its own line.", maxSubject)
		}
		out = append(out, line)
	}
	if len(out) > maxSubjects {
		return nil, stacks.FieldErrorf("subjects", stacks.EINVALID, "A record can have at most %d subject headings.", maxSubjects)
	}
	return out, nil
}

// hasControl reports whether a one-line field holds a line break, a tab or another
// control character.
// notXMLChar reports whether r is outside XML 1.0's characters: a record
// holding one could not be exported as MARCXML or harvested.
func notXMLChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE || r == 0xFFFF, r > 0x10FFFF:
		return true
	}
	return false
}

// nextRecordID is the SQL for a new record's id: above every live and every
// deleted record's, so that a deleted record's id (its OAI identifier and
// permanent link) never names another book (migration 0011). Both maxima are
// read from the primary keys' ends. An aggregate max over the two (not SQLite's
// scalar max(a, b), which PostgreSQL lacks) keeps one statement for both engines.
const nextRecordID = `(SELECT coalesce(max(m.id), 0) + 1 FROM (SELECT max(id) AS id FROM records UNION ALL SELECT max(record_id) FROM deleted_records) AS m)`

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// validISBN reports whether s (already without hyphens and spaces) has the form of
// an ISBN-10 (nine digits and a digit or X) or an ISBN-13.
func validISBN(s string) bool {
	digits := func(s string) bool {
		return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
	}
	switch len(s) {
	case 10:
		return digits(s[:9]) && (digits(s[9:]) || s[9] == 'X')
	case 13:
		return digits(s)
	}
	return false
}

// parseYear reads a year of publication; empty is unknown (NULL).
func parseYear(s string) (sql.NullInt64, bool) {
	if s == "" {
		return sql.NullInt64{}, true
	}
	y, err := strconv.Atoi(s)
	if err != nil || y < 1 || y > 9999 || strings.HasPrefix(s, "+") {
		return sql.NullInt64{}, false
	}
	return sql.NullInt64{Int64: int64(y), Valid: true}, true
}

// CreateRecord adds a record typed in the quick form and returns its id: its
// MARC is made from the form (a book's leader; 020, 100, 245, 264, 650) and its
// fields derived from that. The search index follows by trigger, in the same
// transaction.
func CreateRecord(tx *db.Tx, actor stacks.Actor, in RecordInput) (int64, error) {
	if err := in.Validate(); err != nil {
		return 0, err
	}
	year, _ := parseYear(in.Year)
	b := Bib{Title: in.Title, Author: in.Author, ISBN: in.ISBN, Publisher: in.Publisher, Year: int(year.Int64), Subjects: lines(in.Subjects)}
	return CreateRecordMARC(tx, actor, &marc.Record{Leader: defaultLeader, Fields: bibFields(b)})
}

// UpdateRecord saves the quick form: what it changed is written through to the
// record's MARC (writeThrough), which is saved as a new version, and the
// catalogue's fields are derived from it; the audit entry lists what changed.
// The search index follows by trigger.
func UpdateRecord(tx *db.Tx, actor stacks.Actor, id int64, in RecordInput) error {
	if err := in.Validate(); err != nil {
		return err
	}
	row, err := readRecordRow(tx, id)
	if err != nil {
		return err
	}
	rec := row.kept()
	shown := bibInput(BibOf(rec))
	base := in.Base
	if base == 0 && row.version > 0 {
		// The form was read while the record had no versions: the first save
		// since kept the MARC the form showed as version 1 (keepsPrevious).
		base = 1
	}
	if base != 0 && base != row.version {
		// Someone saved the record since the form was read: what the form
		// showed is that version's.
		old, err := RecordVersionMARC(tx, id, base)
		if err != nil {
			return err
		}
		shown = bibInput(BibOf(old))
	}
	writeThrough(rec, shown, in)
	return writeMARC(tx, actor, id, row, rec, "record.update", "")
}

// RecordInputOf returns a record's fields as the edit form shows them (subjects one
// per line), with its latest version as the form's Base.
func RecordInputOf(tx *db.Tx, id int64) (RecordInput, error) {
	var in RecordInput
	var year sql.NullInt64
	err := tx.QueryRow(`SELECT title, author, isbn, publisher, year, subjects,
		(SELECT coalesce(max(version), 0) FROM record_versions WHERE record_id = records.id) FROM records WHERE id = ?`, id).
		Scan(&in.Title, &in.Author, &in.ISBN, &in.Publisher, &year, &in.Subjects, &in.Base)
	if errors.Is(err, sql.ErrNoRows) {
		return RecordInput{}, errNoRecord(id)
	} else if err != nil {
		return RecordInput{}, fmt.Errorf("find record %d: %w", id, err)
	}
	if year.Valid && year.Int64 > 0 {
		in.Year = strconv.FormatInt(year.Int64, 10)
	}
	return in, nil
}

func errNoRecord(id int64) error {
	return stacks.Errorf(stacks.ENOTFOUND, "There is no record %d in the catalogue. Search for it by title or author.", id)
}

// change is one field of an audited edit.
type change struct{ name, was, is string }

// changes describes the fields that changed, for the audit log.
func changes(cs []change) string {
	var out []string
	for _, c := range cs {
		if c.was != c.is {
			out = append(out, fmt.Sprintf("%s %q -> %q", c.name, c.was, c.is))
		}
	}
	if len(out) == 0 {
		return "no changes"
	}
	return strings.Join(out, "; ")
}

// ItemInput is what staff type to add or edit an item (a copy). The item type and
// home branch are named by code, as the form's choices send them.
type ItemInput struct {
	Barcode        string
	ItemTypeCode   string
	HomeBranchCode string
	CallNumber     string
	// Location is the shelving location, such as "Adult fiction"; empty is none.
	Location string
	// Price is the replacement price, such as "18.99"; empty is none (0).
	Price string
}

// Validate trims the fields, upper-cases the codes, normalizes the barcode and
// checks them. The error's Field is barcode, item_type, home_branch, call_number,
// location or price.
func (in *ItemInput) Validate() error {
	barcode, err := NormalizeBarcode(in.Barcode)
	if err != nil {
		return err
	}
	in.Barcode = barcode
	in.ItemTypeCode = strings.ToUpper(strings.TrimSpace(in.ItemTypeCode))
	in.HomeBranchCode = strings.ToUpper(strings.TrimSpace(in.HomeBranchCode))
	in.CallNumber = strings.TrimSpace(in.CallNumber)
	in.Location = strings.TrimSpace(in.Location)
	in.Price = strings.TrimSpace(in.Price)
	switch {
	case in.ItemTypeCode == "":
		return stacks.FieldErrorf("item_type", stacks.EINVALID, "Choose the item type.")
	case in.HomeBranchCode == "":
		return stacks.FieldErrorf("home_branch", stacks.EINVALID, "Choose the item's home branch.")
	case !utf8.ValidString(in.CallNumber) || utf8.RuneCountInString(in.CallNumber) > maxCallNumber || hasControl(in.CallNumber):
		return stacks.FieldErrorf("call_number", stacks.EINVALID, "Enter a call number of at most %d characters on one line, such as FIC AUS.", maxCallNumber)
	case !utf8.ValidString(in.Location) || utf8.RuneCountInString(in.Location) > maxLocation || hasControl(in.Location):
		return stacks.FieldErrorf("location", stacks.EINVALID, "Enter a shelving location of at most %d characters on one line, such as Adult fiction, or leave it empty.", maxLocation)
	}
	if _, ok := parsePrice(in.Price); !ok {
		return stacks.FieldErrorf("price", stacks.EINVALID, "Enter the price as an amount such as 18.99, or leave the field empty.")
	}
	return nil
}

// parsePrice reads an amount ("18", "18.9", "18.99", "18,99") as cents; empty is 0.
func parsePrice(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	whole, frac, hasFrac := strings.Cut(strings.ReplaceAll(s, ",", "."), ".")
	if whole == "" {
		whole = "0"
	}
	digits := func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
	}
	if !digits(whole) || !digits(frac) || len(whole) > 9 || (hasFrac && (len(frac) == 0 || len(frac) > 2)) {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	var f int64
	if hasFrac {
		f, _ = strconv.ParseInt((frac + "0")[:2], 10, 64)
	}
	cents := w*100 + f
	return cents, cents <= maxPriceCents
}

// formatPrice writes cents as the form shows them: "18.99".
func formatPrice(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

// lookupItemRefs returns the ids of the item type and branch an ItemInput names, in
// one statement.
func lookupItemRefs(tx *db.Tx, in ItemInput) (typeID, branchID int64, err error) {
	var t, b sql.NullInt64
	err = tx.QueryRow(`SELECT (SELECT id FROM item_types WHERE code = ?), (SELECT id FROM branches WHERE code = ?)`,
		in.ItemTypeCode, in.HomeBranchCode).Scan(&t, &b)
	if err != nil {
		return 0, 0, fmt.Errorf("look up item type and branch: %w", err)
	}
	if !t.Valid {
		return 0, 0, stacks.FieldErrorf("item_type", stacks.EINVALID, "There is no item type %q; choose one from the list.", in.ItemTypeCode)
	}
	if !b.Valid {
		return 0, 0, stacks.FieldErrorf("home_branch", stacks.EINVALID, "There is no branch with code %q; choose one from the list.", in.HomeBranchCode)
	}
	return t.Int64, b.Int64, nil
}

func errBarcodeInUse(barcode string) error {
	return stacks.FieldErrorf("barcode", stacks.ECONFLICT, "Barcode %s is already used by another item. Check the label, or search for %s to see that item.", barcode, barcode)
}

// AddItem adds a copy to a record and returns its id. A new item is available, at
// its home branch.
func AddItem(tx *db.Tx, actor stacks.Actor, recordID int64, in ItemInput) (int64, error) {
	if err := in.Validate(); err != nil {
		return 0, err
	}
	var exists bool
	if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM records WHERE id = ?)`, recordID).Scan(&exists); err != nil {
		return 0, fmt.Errorf("find record %d: %w", recordID, err)
	} else if !exists {
		return 0, errNoRecord(recordID)
	}
	typeID, branchID, err := lookupItemRefs(tx, in)
	if err != nil {
		return 0, err
	}
	price, _ := parsePrice(in.Price)
	now := db.FormatTime(tx.Now())
	var id int64
	err = tx.QueryRow(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id,
		call_number, location, status, price_cents, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		in.Barcode, recordID, branchID, branchID, typeID, in.CallNumber, in.Location, StatusAvailable, price, now, now).Scan(&id)
	if db.IsUniqueViolation(err) {
		return 0, errBarcodeInUse(in.Barcode)
	} else if err != nil {
		return 0, fmt.Errorf("insert item %s: %w", in.Barcode, err)
	}
	if err := tx.Audit(actor, "item.create", "item", id, fmt.Sprintf("barcode %s on record %d, %s at %s, call number %q, location %q, price %s",
		in.Barcode, recordID, in.ItemTypeCode, in.HomeBranchCode, in.CallNumber, in.Location, formatPrice(price))); err != nil {
		return 0, err
	}
	return id, nil
}

// StaffStatuses returns the statuses staff may set by hand on the item form. The
// others (checked out, in transit, on the hold shelf) are set only by circulation
// and holds.
func StaffStatuses() []string {
	return []string{StatusAvailable, StatusMissing, StatusLost, StatusWithdrawn}
}

// ItemDetails is an item as its edit form shows it: the item, its current values
// as an ItemInput, and whether circulation holds it (a current loan or a trapped hold).
type ItemDetails struct {
	Item
	Input ItemInput
	// OnLoan and Trapped are read from the loans and holds themselves, not only
	// from the status.
	OnLoan  bool
	Trapped bool
}

// InCirculation reports whether the item's status belongs to circulation: staff
// cannot change it by hand until the item is checked in.
func (d *ItemDetails) InCirculation() bool {
	return d.OnLoan || d.Trapped || !slices.Contains(StaffStatuses(), d.Status)
}

// FindItem returns the item with the id.
func FindItem(tx *db.Tx, id int64) (*Item, error) {
	var it Item
	err := tx.QueryRow(`SELECT `+ItemColumns+ItemFrom+` WHERE i.id = ?`, id).Scan(it.ItemScanDest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoItem(id)
	} else if err != nil {
		return nil, fmt.Errorf("find item %d: %w", id, err)
	}
	return &it, nil
}

// FindItemDetails returns an item with what its edit form needs, in one statement.
func FindItemDetails(tx *db.Tx, id int64) (*ItemDetails, error) {
	var d ItemDetails
	var price int64
	err := tx.QueryRow(`SELECT `+ItemColumns+`, hb.code, it.code, i.price_cents,
		EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL),
		EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status IN ('in_transit', 'waiting'))`+
		ItemFrom+` WHERE i.id = ?`, id).
		Scan(append(d.ItemScanDest(), &d.Input.HomeBranchCode, &d.Input.ItemTypeCode, &price, &d.OnLoan, &d.Trapped)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoItem(id)
	} else if err != nil {
		return nil, fmt.Errorf("find item %d: %w", id, err)
	}
	d.Input.Barcode, d.Input.CallNumber, d.Input.Location = d.Barcode, d.CallNumber, d.Location
	if price != 0 {
		d.Input.Price = formatPrice(price)
	}
	return &d, nil
}

func errNoItem(id int64) error {
	return stacks.Errorf(stacks.ENOTFOUND, "There is no item %d in the catalogue. Search for its record by title, or scan its barcode.", id)
}

// UpdateItem changes an item's details and, if status differs from the current one,
// its status. Staff may set only the StaffStatuses, and only while circulation does
// not hold the item: a checked-out item is checked in first, an item on the hold
// shelf or in transit is dealt with at the desk. The current branch and any transit
// are left as they are.
//
// Marking a lost or missing item Available does not fill holds waiting for it: to put
// a found copy back into circulation with its holds, check it in at the desk.
//
// It returns how many holds asked for this copy it cancelled (withdrawing it).
func UpdateItem(tx *db.Tx, actor stacks.Actor, itemID int64, in ItemInput, status string) (holdsCancelled int, err error) {
	if err := in.Validate(); err != nil {
		return 0, err
	}
	old, err := FindItemDetails(tx, itemID)
	if err != nil {
		return 0, err
	}
	status = strings.TrimSpace(status)
	if status == "" {
		status = old.Status
	}
	if status != old.Status {
		if err := checkStatusChange(old, status); err != nil {
			return 0, err
		}
	}
	typeID, branchID, err := lookupItemRefs(tx, in)
	if err != nil {
		return 0, err
	}
	price, _ := parsePrice(in.Price)
	_, err = tx.Exec(`UPDATE items SET barcode = ?, item_type_id = ?, home_branch_id = ?, call_number = ?, location = ?, price_cents = ?,
		status = ?, updated_at = ? WHERE id = ?`,
		in.Barcode, typeID, branchID, in.CallNumber, in.Location, price, status, db.FormatTime(tx.Now()), itemID)
	if db.IsUniqueViolation(err) {
		return 0, errBarcodeInUse(in.Barcode)
	} else if err != nil {
		return 0, fmt.Errorf("update item %d: %w", itemID, err)
	}
	// Withdrawn here, as by Withdraw, the copy's own holds end: no copy is
	// left to fill them.
	if status == StatusWithdrawn && old.Status != StatusWithdrawn {
		if holdsCancelled, err = cancelItemHolds(tx, actor, itemID, withdrawnCopyReason); err != nil {
			return 0, err
		}
	}
	oldPrice, _ := parsePrice(old.Input.Price)
	return holdsCancelled, tx.Audit(actor, "item.update", "item", itemID, changes([]change{
		{"barcode", old.Barcode, in.Barcode}, {"item type", old.Input.ItemTypeCode, in.ItemTypeCode},
		{"home branch", old.Input.HomeBranchCode, in.HomeBranchCode}, {"call number", old.CallNumber, in.CallNumber},
		{"location", old.Location, in.Location},
		{"price", formatPrice(oldPrice), formatPrice(price)}, {"status", old.Status, status},
	}))
}

// checkStatusChange refuses a status staff may not set, or an item circulation holds.
func checkStatusChange(old *ItemDetails, status string) error {
	switch {
	case old.OnLoan || old.Status == StatusOnLoan:
		return stacks.FieldErrorf("status", stacks.ECONFLICT, "Item %s is checked out, so its status cannot be set to %s. Check it in first, then change its status.",
			old.Barcode, StatusLabel(status))
	case old.Trapped || old.Status == StatusOnHoldShelf:
		return stacks.FieldErrorf("status", stacks.ECONFLICT, "Item %s is set aside for a hold, so its status cannot be set to %s. Cancel the hold or check the item out to the patron first.",
			old.Barcode, StatusLabel(status))
	case old.Status == StatusInTransit:
		return stacks.FieldErrorf("status", stacks.ECONFLICT, "Item %s is in transit, so its status cannot be set to %s. Check it in when it arrives, then change its status.",
			old.Barcode, StatusLabel(status))
	case !slices.Contains(StaffStatuses(), status):
		return stacks.FieldErrorf("status", stacks.EINVALID, "Choose Available, Missing, Lost or Withdrawn.")
	}
	return nil
}
