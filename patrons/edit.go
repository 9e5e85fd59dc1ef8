package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Input is what staff enter to create or edit a patron. Categories and branches are
// named by code, as the form's choices send them.
type Input struct {
	Card           string
	Surname        string
	FirstName      string
	Email          string
	Phone          string
	Address        string
	CategoryCode   string
	HomeBranchCode string
	Notes          string
	// DeskMessage is shown at check out until dismissed; "" for none.
	DeskMessage string
	// KeepHistory exempts the patron's loans from anonymisation (their choice).
	KeepHistory bool
	// CardLost: the patron reported the card lost (Patron.CardLost).
	CardLost bool
	// ExternalID is the patron's id in another system (a student number), which
	// patron loads can match on; "" for none.
	ExternalID string
}

// Field limits: generous for real names and addresses, small enough that a pasted
// document is refused.
const (
	maxCard    = 32
	maxName    = 100
	maxEmail   = 254
	maxPhone   = 40
	maxAddress = 500
	maxNotes   = 2000
	maxBlock   = 500
	maxLedger  = 500
	// maxDeskMessage: a message for the desk is read aloud at the counter, in a
	// sentence or two.
	maxDeskMessage = 500
	// maxExternalID: another system's identifier, a student or resident number.
	maxExternalID = 64
)

// Validate trims the fields, upper-cases the card and the codes, and checks them.
// The error, if any, is a *stacks.Error whose Field names the form field to fix:
// card, surname, first_name, email, phone, address, category, home_branch, notes,
// desk_message or external_id.
func (in *Input) Validate() error {
	if problems := in.Problems(); len(problems) > 0 {
		return problems[0]
	}
	return nil
}

// Problems normalizes the fields as Validate does and returns every problem, at
// most one per field: text that is not valid UTF-8 first, then the fields in the
// form's order. A patron load names all of a row's problems at once; the form
// shows the first (Validate).
func (in *Input) Problems() []*stacks.Error {
	in.Card = normalizeCard(in.Card)
	in.Surname = strings.TrimSpace(in.Surname)
	in.FirstName = strings.TrimSpace(in.FirstName)
	in.Email = strings.TrimSpace(in.Email)
	in.Phone = strings.TrimSpace(in.Phone)
	in.Address = strings.TrimSpace(in.Address)
	in.CategoryCode = strings.ToUpper(strings.TrimSpace(in.CategoryCode))
	in.HomeBranchCode = strings.ToUpper(strings.TrimSpace(in.HomeBranchCode))
	in.Notes = strings.TrimSpace(in.Notes)
	in.DeskMessage = strings.TrimSpace(in.DeskMessage)
	in.ExternalID = strings.TrimSpace(in.ExternalID)

	var problems []*stacks.Error
	invalid := map[string]bool{}
	for _, f := range []struct{ field, value string }{
		{"card", in.Card}, {"surname", in.Surname}, {"first_name", in.FirstName}, {"email", in.Email},
		{"phone", in.Phone}, {"address", in.Address}, {"category", in.CategoryCode},
		{"home_branch", in.HomeBranchCode}, {"notes", in.Notes}, {"desk_message", in.DeskMessage},
		{"external_id", in.ExternalID},
	} {
		if !utf8.ValidString(f.value) {
			invalid[f.field] = true
			problems = append(problems, stacks.FieldErrorf(f.field, stacks.EINVALID, "This field contains characters that are not valid text; type it again."))
		}
	}
	for _, check := range []struct {
		field string
		fn    func() *stacks.Error
	}{
		{"card", func() *stacks.Error {
			switch {
			case in.Card == "":
				return stacks.FieldErrorf("card", stacks.EINVALID, "Enter the card number printed on the patron's card.")
			case len(in.Card) > maxCard || !validCard(in.Card):
				return stacks.FieldErrorf("card", stacks.EINVALID, "A card number has 1 to %d letters, digits or hyphens (-), without spaces.", maxCard)
			}
			return nil
		}},
		{"surname", func() *stacks.Error {
			switch {
			case in.Surname == "":
				return stacks.FieldErrorf("surname", stacks.EINVALID, "Enter the patron's surname.")
			case utf8.RuneCountInString(in.Surname) > maxName || hasControl(in.Surname):
				return stacks.FieldErrorf("surname", stacks.EINVALID, "Enter a surname of at most %d characters on one line.", maxName)
			}
			return nil
		}},
		{"first_name", func() *stacks.Error {
			if utf8.RuneCountInString(in.FirstName) > maxName || hasControl(in.FirstName) {
				return stacks.FieldErrorf("first_name", stacks.EINVALID, "Enter a first name of at most %d characters on one line.", maxName)
			}
			return nil
		}},
		{"email", func() *stacks.Error {
			if in.Email != "" && (!strings.Contains(in.Email, "@") || strings.ContainsAny(in.Email, " \t\r\n") || hasControl(in.Email) || len(in.Email) > maxEmail) {
				return stacks.FieldErrorf("email", stacks.EINVALID, "Enter an e-mail address like name@example.org, or leave the field empty.")
			}
			return nil
		}},
		{"phone", func() *stacks.Error {
			if utf8.RuneCountInString(in.Phone) > maxPhone || hasControl(in.Phone) {
				return stacks.FieldErrorf("phone", stacks.EINVALID, "Enter a phone number of at most %d characters.", maxPhone)
			}
			return nil
		}},
		{"address", func() *stacks.Error {
			switch {
			case utf8.RuneCountInString(in.Address) > maxAddress:
				return stacks.FieldErrorf("address", stacks.EINVALID, "Shorten the address to at most %d characters.", maxAddress)
			case hasControlText(in.Address):
				return stacks.FieldErrorf("address", stacks.EINVALID, "The address contains control characters that are not text; type it again.")
			}
			return nil
		}},
		{"category", func() *stacks.Error {
			if in.CategoryCode == "" {
				return stacks.FieldErrorf("category", stacks.EINVALID, "Choose the patron's category.")
			}
			return nil
		}},
		{"home_branch", func() *stacks.Error {
			if in.HomeBranchCode == "" {
				return stacks.FieldErrorf("home_branch", stacks.EINVALID, "Choose the patron's home branch.")
			}
			return nil
		}},
		{"notes", func() *stacks.Error {
			switch {
			case utf8.RuneCountInString(in.Notes) > maxNotes:
				return stacks.FieldErrorf("notes", stacks.EINVALID, "Shorten the notes to at most %d characters.", maxNotes)
			case hasControlText(in.Notes):
				return stacks.FieldErrorf("notes", stacks.EINVALID, "The notes contain control characters that are not text; type them again.")
			}
			return nil
		}},
		{"desk_message", func() *stacks.Error {
			switch {
			case utf8.RuneCountInString(in.DeskMessage) > maxDeskMessage:
				return stacks.FieldErrorf("desk_message", stacks.EINVALID, "Shorten the message for the desk to at most %d characters; longer notes belong in Notes.", maxDeskMessage)
			case hasControlText(in.DeskMessage):
				return stacks.FieldErrorf("desk_message", stacks.EINVALID, "The message for the desk contains control characters that are not text; type it again.")
			}
			return nil
		}},
		{"external_id", func() *stacks.Error {
			if utf8.RuneCountInString(in.ExternalID) > maxExternalID || hasControl(in.ExternalID) {
				return stacks.FieldErrorf("external_id", stacks.EINVALID, "An external id has at most %d characters on one line, or leave it empty.", maxExternalID)
			}
			return nil
		}},
	} {
		if invalid[check.field] {
			continue
		}
		if err := check.fn(); err != nil {
			problems = append(problems, err)
		}
	}
	return problems
}

func validCard(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// hasControl reports whether a one-line field holds a line break or other control
// character.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

// hasControlText reports whether a multi-line field holds a control character other
// than a line break or a tab (a NUL, say, which SQLite's text functions stop at).
func hasControlText(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return (r < 0x20 && r != '\n' && r != '\r' && r != '\t') || r == 0x7f
	}) >= 0
}

// timezoneSQL reads the library's time zone preference inside another statement:
// "today", for card expiry, is the library's local date.
const timezoneSQL = `(SELECT value FROM preferences WHERE name = 'timezone')`

// localToday returns the library's local date of now, as midnight UTC.
func localToday(now time.Time, tz sql.NullString) time.Time {
	loc := time.UTC
	if tz.Valid {
		if l, err := time.LoadLocation(tz.String); err == nil {
			loc = l
		}
	}
	return dayOf(now.In(loc))
}

// addMonths adds n calendar months to day, keeping the day of the month where it
// exists and taking the month's last day where it does not (31 January + 1 month is
// 28 or 29 February, not 3 March).
func addMonths(day time.Time, n int) time.Time {
	y, m, d := day.Date()
	first := time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(d, last), 0, 0, 0, 0, time.UTC)
}

// refs are the ids an Input's codes name, with the category's card validity and the
// library's time zone, read in one statement.
type refs struct {
	categoryID, branchID int64
	cardMonths           int
	tz                   sql.NullString
}

func lookupRefs(tx *db.Tx, in Input) (refs, error) {
	var cat, months, branch sql.NullInt64
	var r refs
	err := tx.QueryRow(`SELECT
		(SELECT id FROM patron_categories WHERE code = ?1),
		(SELECT card_months FROM patron_categories WHERE code = ?1),
		(SELECT id FROM branches WHERE code = ?2),
		`+timezoneSQL, in.CategoryCode, in.HomeBranchCode).Scan(&cat, &months, &branch, &r.tz)
	if err != nil {
		return refs{}, fmt.Errorf("look up category and branch: %w", err)
	}
	if !cat.Valid {
		return refs{}, stacks.FieldErrorf("category", stacks.EINVALID, "There is no patron category %q; choose one from the list.", in.CategoryCode)
	}
	if !branch.Valid {
		return refs{}, stacks.FieldErrorf("home_branch", stacks.EINVALID, "There is no branch with code %q; choose one from the list.", in.HomeBranchCode)
	}
	r.categoryID, r.cardMonths, r.branchID = cat.Int64, int(months.Int64), branch.Int64
	return r, nil
}

// errInUse names the card or the external id another patron has, from the unique
// index the statement violated.
func errInUse(err error, in Input) error {
	if strings.Contains(err.Error(), "external_id") {
		return stacks.FieldErrorf("external_id", stacks.ECONFLICT, "External id %s is already another patron's. Check it, or search for that patron.", in.ExternalID)
	}
	return errCardInUse(in.Card)
}

// nullIfEmpty stores "" as NULL, for columns unique when set.
func nullIfEmpty(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func errCardInUse(card string) error {
	return stacks.FieldErrorf("card", stacks.ECONFLICT, "Card number %s is already in use by another patron. Check the card, or find that patron by searching for the card number.", card)
}

// Create adds a patron. The card is valid from today for the category's card
// validity in months.
func Create(tx *db.Tx, actor stacks.Actor, in Input) (*Patron, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	r, err := lookupRefs(tx, in)
	if err != nil {
		return nil, err
	}
	now := tx.Now()
	expires := addMonths(localToday(now, r.tz), r.cardMonths)
	var id int64
	err = tx.QueryRow(`INSERT INTO patrons (card, surname, first_name, email, phone, address,
		category_id, home_branch_id, expires_on, notes, desk_message, keep_history, created_at, external_id, card_lost)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		in.Card, in.Surname, in.FirstName, in.Email, in.Phone, in.Address,
		r.categoryID, r.branchID, db.FormatDay(expires), in.Notes, in.DeskMessage, in.KeepHistory, db.FormatTime(now), nullIfEmpty(in.ExternalID), in.CardLost).Scan(&id)
	if db.IsUniqueViolation(err) {
		return nil, errInUse(err, in)
	} else if err != nil {
		return nil, fmt.Errorf("insert patron: %w", err)
	}
	if err := tx.Audit(actor, "patron.create", "patron", id,
		fmt.Sprintf("card %s, %s %s, %s at %s, expires %s", in.Card, in.FirstName, in.Surname,
			in.CategoryCode, in.HomeBranchCode, db.FormatDay(expires))); err != nil {
		return nil, err
	}
	return FindByID(tx, id)
}

// Update changes a patron's details. The card's expiry, blocks and the ledger are
// changed by their own functions. The audit entry lists the fields that changed.
func Update(tx *db.Tx, actor stacks.Actor, id int64, in Input) (*Patron, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	old, err := FindByID(tx, id)
	if err != nil {
		return nil, err
	}
	r, err := lookupRefs(tx, in)
	if err != nil {
		return nil, err
	}
	_, err = tx.Exec(`UPDATE patrons SET card = ?, surname = ?, first_name = ?, email = ?, phone = ?,
		address = ?, category_id = ?, home_branch_id = ?, notes = ?, desk_message = ?, keep_history = ?, external_id = ?, card_lost = ? WHERE id = ?`,
		in.Card, in.Surname, in.FirstName, in.Email, in.Phone, in.Address, r.categoryID, r.branchID, in.Notes, in.DeskMessage, in.KeepHistory,
		nullIfEmpty(in.ExternalID), in.CardLost, id)
	if db.IsUniqueViolation(err) {
		return nil, errInUse(err, in)
	} else if err != nil {
		return nil, fmt.Errorf("update patron %d: %w", id, err)
	}
	var changes []string
	for _, c := range []struct{ name, was, is string }{
		{"card", old.Card, in.Card}, {"surname", old.Surname, in.Surname}, {"first name", old.FirstName, in.FirstName},
		{"email", old.Email, in.Email}, {"phone", old.Phone, in.Phone}, {"address", old.Address, in.Address},
		{"category", old.CategoryCode, in.CategoryCode}, {"home branch", old.HomeBranchCode, in.HomeBranchCode},
		{"notes", old.Notes, in.Notes}, {"desk message", old.DeskMessage, in.DeskMessage},
		{"keeps loan history", yesNo(old.KeepHistory), yesNo(in.KeepHistory)},
		{"card reported lost", yesNo(old.CardLost), yesNo(in.CardLost)},
		{"external id", old.ExternalID, in.ExternalID},
	} {
		if c.was != c.is {
			changes = append(changes, fmt.Sprintf("%s %q -> %q", c.name, c.was, c.is))
		}
	}
	detail := "no changes"
	if len(changes) > 0 {
		detail = strings.Join(changes, "; ")
	}
	if err := tx.Audit(actor, "patron.update", "patron", id, detail); err != nil {
		return nil, err
	}
	return FindByID(tx, id)
}

// RenewCard extends a patron's card by their category's card validity (card_months,
// the enrolment period), counted from the current expiry, or from today if the card
// has already expired: renewing early loses no days, and renewing late does not
// backdate. today is the library's local date (its calendar date is taken in its
// own location), so the caller, which knows the library's time zone, decides what
// day it is. It returns the new expiry, a calendar date held as midnight UTC.
func RenewCard(tx *db.Tx, actor stacks.Actor, patronID int64, today time.Time) (time.Time, error) {
	var expires string
	var months int
	err := tx.QueryRow(`SELECT p.expires_on, c.card_months
		FROM patrons p JOIN patron_categories c ON c.id = p.category_id WHERE p.id = ?`, patronID).Scan(&expires, &months)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", patronID)
	} else if err != nil {
		return time.Time{}, fmt.Errorf("renew card of patron %d: %w", patronID, err)
	}
	current, err := time.Parse(db.DayFormat, expires)
	if err != nil {
		return time.Time{}, fmt.Errorf("patron %d: stored expiry %q: %w", patronID, expires, err)
	}
	from := dayOf(today)
	if current.After(from) {
		from = current
	}
	next := addMonths(from, months)
	if _, err := tx.Exec(`UPDATE patrons SET expires_on = ? WHERE id = ?`, db.FormatDay(next), patronID); err != nil {
		return time.Time{}, fmt.Errorf("renew card of patron %d: %w", patronID, err)
	}
	if err := tx.Audit(actor, "patron.renew_card", "patron", patronID,
		fmt.Sprintf("expiry %s -> %s", expires, db.FormatDay(next))); err != nil {
		return time.Time{}, err
	}
	return next, nil
}

// DismissDeskMessage clears the patron's message for the desk once staff have acted
// on it; the audit log keeps the message and who dismissed it. Dismissing when
// there is no message (two desks dismissing at once) changes nothing and is not
// an error.
func DismissDeskMessage(tx *db.Tx, actor stacks.Actor, patronID int64) error {
	var msg string
	err := tx.QueryRow(`SELECT desk_message FROM patrons WHERE id = ?`, patronID).Scan(&msg)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", patronID)
	} else if err != nil {
		return fmt.Errorf("dismiss desk message of patron %d: %w", patronID, err)
	}
	if msg == "" {
		return nil
	}
	if _, err := tx.Exec(`UPDATE patrons SET desk_message = '' WHERE id = ?`, patronID); err != nil {
		return fmt.Errorf("dismiss desk message of patron %d: %w", patronID, err)
	}
	return tx.Audit(actor, "patron.dismiss_desk_message", "patron", patronID, msg)
}

// SetBlock blocks a patron, with a note the desk shows when it refuses them, or
// lifts the block (the note is then optional and goes to the audit log only).
// Either way the block is then staff's: a self-check's Patron Enable no longer
// lifts it (see BlockFromTerminal).
func SetBlock(tx *db.Tx, actor stacks.Actor, id int64, blocked bool, note string) error {
	note = strings.TrimSpace(note)
	switch {
	case !utf8.ValidString(note):
		return stacks.FieldErrorf("note", stacks.EINVALID, "The note contains characters that are not valid text; type it again.")
	case utf8.RuneCountInString(note) > maxBlock:
		return stacks.FieldErrorf("note", stacks.EINVALID, "Shorten the note to at most %d characters.", maxBlock)
	case hasControlText(note):
		return stacks.FieldErrorf("note", stacks.EINVALID, "The note contains control characters that are not text; type it again.")
	case blocked && note == "":
		return stacks.FieldErrorf("note", stacks.EINVALID, "Say why the patron is blocked: the desk shows this note when it refuses a checkout.")
	}
	blockNote, action := note, "patron.block"
	if !blocked {
		blockNote, action = "", "patron.unblock"
	}
	res, err := tx.Exec(`UPDATE patrons SET blocked = ?, block_note = ?, block_source = '' WHERE id = ?`, blocked, blockNote, id)
	if err != nil {
		return fmt.Errorf("%s %d: %w", action, id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s %d: %w", action, id, err)
	} else if n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", id)
	}
	return tx.Audit(actor, action, "patron", id, note)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// SetKeepHistory records whether the patron keeps their loan history (exempt
// from anonymisation, package privacy): the patron's choice, made in My account
// or at the desk on their behalf.
func SetKeepHistory(tx *db.Tx, actor stacks.Actor, patronID int64, keep bool) error {
	res, err := tx.Exec(`UPDATE patrons SET keep_history = ? WHERE id = ?`, keep, patronID)
	if err != nil {
		return fmt.Errorf("set keep history: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron %d.", patronID)
	}
	return tx.Audit(actor, "patron.keep_history", "patron", patronID, "keeps loan history: "+yesNo(keep))
}
