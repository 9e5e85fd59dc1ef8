// Package patrons owns the library's members: their records and cards, blocks set by
// staff, their fines ledger, and the summary of their standing that the desk shows.
//
// Every function takes the caller's open transaction, so that a checkout or checkin
// can read a patron, charge a fine and write its own rows in one commit.
package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Patron is a library member, with the codes and names of their category and home
// branch.
type Patron struct {
	ID             int64
	Card           string
	Surname        string
	FirstName      string
	Email          string
	Phone          string
	Address        string
	CategoryID     int64
	CategoryCode   string
	CategoryName   string
	HomeBranchID   int64
	HomeBranchCode string
	HomeBranchName string
	// ExpiresOn is the last day the card is valid: a local calendar date, held as
	// midnight UTC of that date.
	ExpiresOn time.Time
	Blocked   bool
	// BlockNote is the reason staff gave for the block; the desk shows it.
	BlockNote string
	Notes     string
	// DeskMessage is a message staff left for the desk ("Has a parcel waiting"):
	// shown at check out and on the patron page until someone dismisses it
	// (DismissDeskMessage). "" when there is none.
	DeskMessage string
	CreatedAt   time.Time
	// HasPIN: a PIN for self-check machines is set (SetPINHash); the PIN itself is
	// never read back.
	HasPIN bool
	// PINGeneration counts the PIN's changes (SetPINHash): a patrons'-site
	// session remembers the generation it signed in under and ends when the
	// PIN changes, at the desk or on another device.
	PINGeneration int64
	// KeepHistory: the patron asked to keep their loan history; the
	// anonymisation run passes over their loans (package privacy).
	KeepHistory bool
	// ClaimsReturned counts the loans the patron ever claimed to have returned
	// (open or closed; kept on the patron, so anonymising old loans does not
	// lower it): staff watch for a patron who claims often.
	ClaimsReturned int
	// ExternalID is the patron's id in another system (a student number), ""
	// for none; patron loads may match on it.
	ExternalID string
	// CardLost: the patron reported the card lost. The desk says so when the
	// card is scanned (someone else may be using it) until staff untick it,
	// usually when they give a new card number.
	CardLost bool
}

// Name returns the name as staff say it: "Alex Reader".
func (p *Patron) Name() string {
	if p.FirstName == "" {
		return p.Surname
	}
	return p.FirstName + " " + p.Surname
}

// SortName returns the name as lists sort it: "Reader, Alex".
func (p *Patron) SortName() string {
	if p.FirstName == "" {
		return p.Surname
	}
	return p.Surname + ", " + p.FirstName
}

// Expired reports whether the card has run out: the card is valid through its
// expiry day, so it is expired once today's date is after ExpiresOn. Today is the
// calendar date of now in now's location: pass now in the library's time zone.
func (p *Patron) Expired(now time.Time) bool {
	return dayOf(now).After(p.ExpiresOn)
}

// ExpiresWithin reports whether the card has expired or expires within days of
// today (0: expires today or has expired), the time to offer renewing it at the
// desk. As for Expired, pass now in the library's time zone.
func (p *Patron) ExpiresWithin(now time.Time, days int) bool {
	return !p.ExpiresOn.After(dayOf(now).AddDate(0, 0, days))
}

// dayOf returns midnight UTC of t's calendar date in t's own location.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Search limits: a card number, or a few words of a name.
const (
	maxSearch      = 200
	maxSearchWords = 10
)

// patronSelect reads a patron with their category and home branch in one statement.
const (
	patronColumns = `SELECT p.id, p.card, p.surname, p.first_name, p.email, p.phone, p.address,
	p.category_id, c.code, c.name, p.home_branch_id, b.code, b.name,
	p.expires_on, p.blocked, p.block_note, p.notes, p.desk_message, p.created_at, p.pin_hash <> '', p.pin_generation, p.keep_history,
	coalesce(p.external_id, ''), p.claims_returned_count, p.card_lost`
	patronFrom = `
	FROM patrons p
	JOIN patron_categories c ON c.id = p.category_id
	JOIN branches b ON b.id = p.home_branch_id`
	patronSelect = patronColumns + patronFrom
)

// scanPatron scans patronColumns, then any extra columns into extra.
func scanPatron(row interface{ Scan(...any) error }, extra ...any) (*Patron, error) {
	var p Patron
	var expires string
	var created db.Time
	err := row.Scan(append([]any{&p.ID, &p.Card, &p.Surname, &p.FirstName, &p.Email, &p.Phone, &p.Address,
		&p.CategoryID, &p.CategoryCode, &p.CategoryName, &p.HomeBranchID, &p.HomeBranchCode, &p.HomeBranchName,
		&expires, &p.Blocked, &p.BlockNote, &p.Notes, &p.DeskMessage, &created, &p.HasPIN, &p.PINGeneration, &p.KeepHistory, &p.ExternalID, &p.ClaimsReturned, &p.CardLost}, extra...)...)
	if err != nil {
		return nil, err
	}
	p.ExpiresOn, err = time.Parse(db.DayFormat, expires)
	if err != nil {
		return nil, fmt.Errorf("patron %d: stored expiry %q: %w", p.ID, expires, err)
	}
	p.CreatedAt = created.Time
	return &p, nil
}

// normalizeCard is how cards are stored and looked up: trimmed and upper-case, so
// that the unique index both finds a card and keeps "p0001" from duplicating "P0001".
func normalizeCard(card string) string {
	return strings.ToUpper(strings.TrimSpace(card))
}

// FindByCard returns the patron with the given card number, as scanned or typed:
// surrounding spaces and letter case do not matter.
func FindByCard(tx *db.Tx, card string) (*Patron, error) {
	trimmed := strings.TrimSpace(card)
	if trimmed == "" {
		return nil, stacks.FieldErrorf("card", stacks.EINVALID, "Enter or scan a card number.")
	}
	// Both spellings, so that the index serves the look-up and a card stored in
	// lower case before normalization is still found.
	p, err := scanPatron(tx.QueryRow(patronSelect+` WHERE p.card IN (?, ?) LIMIT 1`, trimmed, normalizeCard(trimmed)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.FieldErrorf("card", stacks.ENOTFOUND, "No patron has card number %q. Check the card, or search by name.", trimmed)
	} else if err != nil {
		return nil, fmt.Errorf("find patron by card %q: %w", trimmed, err)
	}
	return p, nil
}

// FindByID returns the patron with the given id.
func FindByID(tx *db.Tx, id int64) (*Patron, error) {
	p, err := scanPatron(tx.QueryRow(patronSelect+` WHERE p.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", id)
	} else if err != nil {
		return nil, fmt.Errorf("find patron %d: %w", id, err)
	}
	return p, nil
}

// Search finds patrons by what staff have at hand:
//
//   - the name: every word of q must begin a word of the surname or first name, in
//     any order, commas aside ("ale rea", "Reader, Alex" and "reader a" find Alex
//     Reader);
//   - the card number, or any part of it ("0004" finds P0004);
//   - the phone number, or part of it, as digits: spaces, dashes, dots, parentheses
//     and a leading + are ignored on both sides ("(555) 01-01" finds 555-0101);
//   - the e-mail address, or its beginning ("alex.reader@").
//
// Letter case does not matter. A patron whose card is exactly q comes first; the
// rest are ordered by surname and first name. At most limit patrons are returned;
// an empty q finds nobody.
//
// Every way is a comparison on each patron's row (a scan of the patrons table, as
// the card's was already: a few milliseconds for 600 patrons on either engine,
// BenchmarkSearch600): no index serves a word that may begin inside a name, nor a
// part of a number.
func Search(tx *db.Tx, q string, limit int) ([]Patron, error) {
	q = strings.TrimSpace(q)
	words := strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
	if len(words) == 0 {
		return nil, nil
	}
	// Each word is a LIKE pattern: SQLite refuses patterns over 50,000 bytes and
	// statements with too many; no card or name needs more than this.
	if len(q) > maxSearch || len(words) > maxSearchWords {
		return nil, stacks.Errorf(stacks.EINVALID, "Search with a card number or a few words of the name (at most %d characters).", maxSearch)
	}
	if limit <= 0 {
		limit = 50
	}
	sq := db.Pick(tx, searchSQLite, searchPostgres)
	var b strings.Builder
	args := []any{q, likeContains(q)}
	b.WriteString(patronSelect + ` WHERE ` + sq.cardIs + ` OR ` + sq.cardLike)
	if digits, ok := phoneDigits(q); ok {
		b.WriteString(` OR ` + phoneDigitsSQL + ` LIKE ?`)
		args = append(args, "%"+digits+"%")
	}
	if len(words) == 1 {
		b.WriteString(` OR ` + sq.emailLike)
		args = append(args, likePrefix(q))
	}
	// The name words: each must start a word of "surname first_name"; hyphenated
	// names count as separate words.
	b.WriteString(` OR (`)
	for i, w := range words {
		if i > 0 {
			b.WriteString(` AND `)
		}
		b.WriteString(sq.nameLike)
		args = append(args, "% "+escapeLike(w)+"%")
	}
	b.WriteString(`) ORDER BY ` + sq.cardIs + ` DESC, p.surname, p.first_name, p.id LIMIT ?`)
	args = append(args, q, limit)

	rows, err := tx.Query(b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("search patrons %q: %w", q, err)
	}
	defer rows.Close()
	var out []Patron
	for rows.Next() {
		p, err := scanPatron(rows)
		if err != nil {
			return nil, fmt.Errorf("search patrons: %w", err)
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search patrons: %w", err)
	}
	return out, nil
}

// Identified is the patron staff meant by what they scanned or typed at a desk
// form: Patron when the card or the name picked out one patron, else the Matches
// to choose from.
type Identified struct {
	// Patron is the one patron meant; nil when several match.
	Patron *Patron
	// Matches are the patrons a name matched when it matched several, by surname
	// and first name; More reports that others matched beyond the limit.
	Matches []Patron
	More    bool
	// ByCard: input was a patron's card number, exactly. Otherwise the patron or
	// the matches were found by Search (a name, part of a card, a phone number or
	// an e-mail address), which an item's barcode can match too.
	ByCard bool
}

// Identify finds the patron meant by input, as a desk form's "Card number" field
// takes it: a card number first (FindByCard), else a few words of the name
// (Search). One match is the patron; several are returned to choose from, at most
// limit of them. Nothing matching is an ENOTFOUND error on the field "card"; an
// empty or unusable input, EINVALID on the same field.
func Identify(tx *db.Tx, input string, limit int) (Identified, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		return Identified{}, stacks.FieldErrorf("card", stacks.EINVALID, "Scan the patron's card, or type a card number or the patron's name.")
	}
	p, err := FindByCard(tx, input)
	if err == nil {
		return Identified{Patron: p, ByCard: true}, nil
	} else if stacks.ErrorCode(err) != stacks.ENOTFOUND {
		return Identified{}, err
	}
	if limit <= 0 {
		limit = 50
	}
	matches, err := Search(tx, input, limit+1)
	if code := stacks.ErrorCode(err); code != "" && code != stacks.EINTERNAL {
		return Identified{}, stacks.FieldErrorf("card", code, "%s", stacks.ErrorMessage(err))
	} else if err != nil {
		return Identified{}, err
	}
	switch len(matches) {
	case 0:
		return Identified{}, stacks.FieldErrorf("card", stacks.ENOTFOUND,
			"No patron has card number %q, and no patron's name matches it. Check the card, or find the patron on the Patrons page (register them there if they are new).", input)
	case 1:
		return Identified{Patron: &matches[0]}, nil
	}
	id := Identified{Matches: matches}
	if len(matches) > limit {
		id.Matches, id.More = matches[:limit], true
	}
	return id, nil
}

// searchSQL is the text of Search's case-blind comparisons for one engine: the
// card (equal, or containing a LIKE pattern), one word of the name and the e-mail
// address's beginning (LIKE patterns).
type searchSQL struct{ cardIs, cardLike, nameLike, emailLike string }

// searchSQLite: SQLite's LIKE ignores the case of ASCII letters, and NOCASE does
// for =. Both scan the table (the card index is binary), but lower() on every row,
// which both engines would run, was some 35% slower here on 5,000 patrons.
var searchSQLite = searchSQL{
	cardIs:    `p.card = ? COLLATE NOCASE`,
	cardLike:  `p.card LIKE ? ESCAPE '\'`,
	nameLike:  `(' ' || replace(p.surname || ' ' || p.first_name, '-', ' ')) LIKE ? ESCAPE '\'`,
	emailLike: `p.email LIKE ? ESCAPE '\'`,
}

// searchPostgres: PostgreSQL's LIKE heeds case; ILIKE does not.
var searchPostgres = searchSQL{
	cardIs:    `lower(p.card) = lower(?)`,
	cardLike:  `p.card ILIKE ? ESCAPE '\'`,
	nameLike:  `(' ' || replace(p.surname || ' ' || p.first_name, '-', ' ')) ILIKE ? ESCAPE '\'`,
	emailLike: `p.email ILIKE ? ESCAPE '\'`,
}

// phoneDigitsSQL is a patron's phone number as digits, the way phoneDigits reads
// what staff type: the same on both engines.
const phoneDigitsSQL = `replace(replace(replace(replace(replace(replace(p.phone, ' ', ''), '-', ''), '.', ''), '(', ''), ')', ''), '+', '')`

// minPhoneDigits is how many digits a search needs to be tried as (part of) a phone
// number: fewer would match most patrons.
const minPhoneDigits = 4

// phoneDigits returns the digits of q when q reads as (part of) a phone number:
// digits, with only spaces, dashes, dots, parentheses and + between them, and at
// least minPhoneDigits digits.
func phoneDigits(q string) (string, bool) {
	var b strings.Builder
	for _, r := range q {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')' || r == '+':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() >= minPhoneDigits
}

// escapeLike escapes LIKE's wildcards, with backslash as the escape character.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func likePrefix(s string) string { return escapeLike(s) + "%" }

func likeContains(s string) string { return "%" + escapeLike(s) + "%" }

// Category is a kind of membership (Adult, Child, Staff): it sets how long a card
// is valid and how many holds a patron may have.
type Category struct {
	ID         int64
	Code       string
	Name       string
	CardMonths int
	MaxHolds   int
}

// ListCategories returns every patron category, by name.
func ListCategories(tx *db.Tx) ([]Category, error) {
	rows, err := tx.Query(`SELECT id, code, name, card_months, max_holds FROM patron_categories ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list patron categories: %w", err)
	}
	defer rows.Close()
	var out []Category
	for rows.Next() {
		var c Category
		if err := rows.Scan(&c.ID, &c.Code, &c.Name, &c.CardMonths, &c.MaxHolds); err != nil {
			return nil, fmt.Errorf("list patron categories: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list patron categories: %w", err)
	}
	return out, nil
}
