package patrons

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// Patron loads: a CSV file of patrons (a school's students, a council's residents)
// creates and updates patrons in one write transaction. The file is read and every
// row checked first, against a read snapshot, so that the write transaction only
// writes: the desk waits for the import's writes, not for its parsing, its checks
// or the hashing of PINs.

// Match modes: which column finds the patron a row is about.
const (
	MatchCard       = "card"
	MatchExternalID = "external_id"
)

// MaxLoadRows bounds one load: a large school district's yearly file, with room.
const MaxLoadRows = 100_000

// WebLoadRows is the most rows one load from the administration page takes
// (LoadOptions.MaxRows): a load holds the write transaction, and every desk's
// checkout waits behind it, about 10 to 15 seconds at 100,000 rows, about 1
// at 20,000. The command line takes up to MaxLoadRows and warns.
const WebLoadRows = 20_000

// LoadColumns are the columns a load understands, by their canonical name, each
// with the header names that mean it (letter case, spaces and hyphens aside).
// Koha's names (cardnumber, categorycode, branchcode, dateexpiry) are accepted, so
// a file exported for Koha loads as it is.
var LoadColumns = []struct {
	Name    string
	Aliases []string
	Help    string
}{
	{"card", []string{"cardnumber", "card", "card_number"}, "card number (letters, digits, hyphens)"},
	{"external_id", []string{"external_id", "externalid", "student_id", "studentid"}, "the patron's id in another system, e.g. a student number"},
	{"surname", []string{"surname", "last_name", "lastname", "family_name"}, "required for a new patron"},
	{"first_name", []string{"first_name", "firstname", "given_name"}, ""},
	{"category", []string{"category", "categorycode", "category_code"}, "patron category code, e.g. ADULT"},
	{"home_branch", []string{"home_branch", "branch", "branchcode", "branch_code"}, "home branch code, e.g. CEN"},
	{"expires_on", []string{"expires_on", "dateexpiry", "expiry", "expires"}, "card expiry, YYYY-MM-DD"},
	{"email", []string{"email", "e_mail"}, ""},
	{"phone", []string{"phone", "telephone"}, ""},
	{"address", []string{"address"}, ""},
	{"notes", []string{"notes", "borrowernotes"}, ""},
	{"pin", []string{"pin"}, "initial PIN for self-check, 4 to 32 characters"},
}

// clearable are the columns an empty cell may clear (LoadOptions.ClearEmpty); the
// others are required and stay as they are.
var clearable = map[string]bool{"first_name": true, "email": true, "phone": true, "address": true, "notes": true, "external_id": true}

// LoadOptions say how to load a file.
type LoadOptions struct {
	Actor stacks.Actor
	// Match is MatchCard (default) or MatchExternalID.
	Match string
	// DryRun checks every row and says what would happen, and writes nothing.
	DryRun bool
	// SkipBad imports the good rows when some are bad; otherwise one bad row
	// stops the whole file.
	SkipBad bool
	// ClearEmpty: an empty cell clears the field of a patron it updates (only
	// first name, email, phone, address, notes and external id); otherwise an
	// empty cell leaves the field as it is.
	ClearEmpty bool
	// Defaults for new patrons whose row has no category, home branch or expiry.
	// Without a default expiry, a new card is valid for its category's months.
	DefaultCategory, DefaultBranch, DefaultExpiry string
	// MaxPINs, when not 0, refuses a file that sets more PINs: each is hashed
	// with bcrypt, slow on purpose, on the bounded pool the sign-ins share.
	MaxPINs int
	// OverwritePINs: the pin column sets the PIN of existing patrons too;
	// otherwise it sets only new patrons' PINs, so that reloading a file does
	// not undo the PINs patrons chose since.
	OverwritePINs bool
	// MaxRows, when not 0, refuses a file of more rows (at most MaxLoadRows).
	MaxRows int
	// Progress, when set, is told each time a PIN is hashed: how many of the
	// load's PINs are hashed so far, and how many there are. It may be called
	// from several goroutines at once.
	Progress func(hashed, total int)
}

// LoadRow is what a load did, or would do, with one row of the file.
type LoadRow struct {
	// Line is the row's line in the file (the header is line 1).
	Line int
	// Card and ExternalID are as the row gives them (or the patron has them).
	Card, ExternalID string
	// Action is "create", "update" or "unchanged"; "" for a bad row.
	Action string
	// Changes names the fields an update changes; Details says each change with
	// its old and new value (`expires on "2026-08-31" -> "2027-08-31"`).
	Changes, Details []string
	// Problems lists everything wrong with the row; empty for a good one.
	Problems []string

	in        Input
	patronID  int64
	expires   string
	extID     sql.NullString
	pin       string
	pinHash   string
	set       map[string]bool
	auditText string
	// cardTaken is the patron who has the card the row gives, as the database
	// has it; planRows decides whether the file moves them off it.
	cardTaken *snapPatron
}

// Key names the row for people: its card, or its external id.
func (r LoadRow) Key() string {
	switch {
	case r.Card != "" && r.ExternalID != "":
		return r.Card + " / " + r.ExternalID
	case r.Card != "":
		return r.Card
	}
	return r.ExternalID
}

// LoadResult is the outcome of a load.
type LoadResult struct {
	// Columns are the recognised columns, by canonical name, in the file's order;
	// Unknown the headers that mean nothing to Stacks (their cells are not read).
	Columns, Unknown []string
	Rows             []LoadRow
	// Delimiter is the file's cell separator: ',' unless the header row has no
	// comma and has semicolons (';', Excel's CSV in many European locales) or
	// tabs ('\t').
	Delimiter rune
	// PINs is how many good rows set a PIN.
	PINs int
	// Created, Updated, Unchanged and Bad count the rows.
	Created, Updated, Unchanged, Bad int
	// Imported: the good rows were written (false for a dry run, or when bad rows
	// stopped the load).
	Imported bool
	// CheckTime is reading and checking the file; HashTime hashing its PINs;
	// WriteTime the one write transaction, from asking for the write connection
	// to the durable commit: at most this long, a desk's write waits behind it.
	CheckTime, HashTime, WriteTime time.Duration

	// checked: CheckLoad passed the load, and ApplyLoad may write it.
	checked bool
}

// BadRows returns the rows with problems.
func (r *LoadResult) BadRows() []LoadRow {
	var bad []LoadRow
	for _, row := range r.Rows {
		if len(row.Problems) > 0 {
			bad = append(bad, row)
		}
	}
	return bad
}

// errBadRows is the error a load returns when bad rows stopped it.
func errBadRows(n int) error {
	rows := "rows have"
	if n == 1 {
		rows = "row has"
	}
	return stacks.Errorf(stacks.EINVALID, "%d %s problems, listed with their line numbers; nothing was imported. Correct the file and load it again, or import only the good rows.", n, rows)
}

// Load reads a CSV file of patrons and creates or updates them in one write
// transaction: CheckLoad, then, unless opt.DryRun, ApplyLoad. A file that
// cannot be read as CSV, or whose header lacks the column rows are matched on,
// is refused with an EINVALID error and no rows. Bad rows are listed in the
// result with every problem; unless opt.SkipBad, any bad row means nothing is
// written and the error says so.
func Load(ctx context.Context, d *db.DB, r io.Reader, opt LoadOptions) (*LoadResult, error) {
	res, err := CheckLoad(ctx, d, r, opt)
	if err != nil || opt.DryRun {
		return res, err
	}
	return res, ApplyLoad(ctx, d, res, opt)
}

// CheckLoad reads a CSV file of patrons and checks every row against a read
// snapshot, writing nothing and hashing nothing: what Load would do (res.Rows),
// and how many PINs it would hash (res.PINs), so that a caller can decide how to
// run ApplyLoad (a web request hashes only a few PINs itself). It returns the
// errors Load returns before writing.
func CheckLoad(ctx context.Context, d *db.DB, r io.Reader, opt LoadOptions) (*LoadResult, error) {
	start := time.Now()
	if opt.Match == "" {
		opt.Match = MatchCard
	}
	if opt.Match != MatchCard && opt.Match != MatchExternalID {
		return nil, stacks.FieldErrorf("match", stacks.EINVALID, "Match rows on the card number (card) or the external id (external_id), not %q.", opt.Match)
	}
	res := &LoadResult{}
	maxRows := MaxLoadRows
	if opt.MaxRows > 0 {
		maxRows = min(opt.MaxRows, MaxLoadRows)
	}
	cols, records, err := readLoadFile(r, res, maxRows)
	if err != nil {
		return res, err
	}
	if err := checkDefaults(&opt); err != nil {
		return res, err
	}
	if !cols.has(opt.Match) {
		return res, stacks.Errorf(stacks.EINVALID, "The file has no %s column, which rows are matched on. Add it to the header row (%s), or match on the other column.",
			opt.Match, strings.Join(aliasesOf(opt.Match), ", "))
	}
	var snap *loadSnapshot
	err = d.Read(ctx, func(tx *db.Tx) error {
		var err error
		snap, err = readSnapshot(tx, cols, records)
		return err
	})
	if err != nil {
		return res, err
	}
	planRows(res, cols, records, snap, opt)
	res.CheckTime = time.Since(start)
	for _, row := range res.Rows {
		if row.pin != "" && row.Action != "" {
			res.PINs++
		}
	}
	if res.Bad > 0 && !opt.SkipBad {
		return res, errBadRows(res.Bad)
	}
	// Before the dry run's return: a dry run says what the import would say.
	if opt.MaxPINs > 0 && res.PINs > opt.MaxPINs {
		return res, stacks.Errorf(stacks.EINVALID, "The file sets %d PINs; here at most %d are set in one import, since each takes about a tenth of a second to protect. Nothing was imported. Split the file, use the command stacks patrons import, or leave the pin column out and set PINs at the desk.", res.PINs, opt.MaxPINs)
	}
	res.checked = true
	return res, nil
}

// ApplyLoad hashes the PINs of a load CheckLoad passed on the bounded pool of
// package passwords (opt.Progress is told how far it got), then writes its good
// rows in one write transaction, with the snapshot's checks repeated where a
// desk may have changed a patron since. Nothing is written if ctx ends first.
func ApplyLoad(ctx context.Context, d *db.DB, res *LoadResult, opt LoadOptions) error {
	if !res.checked || res.Imported {
		return fmt.Errorf("apply a patron load: the load was not checked, or was already written")
	}
	hashStart := time.Now()
	if err := hashPINs(ctx, res.Rows, opt.Progress); err != nil {
		return err
	}
	res.HashTime = time.Since(hashStart)

	writeStart := time.Now()
	err := d.Write(ctx, func(tx *db.Tx) error { return writeRows(tx, opt.Actor, res) })
	res.WriteTime = time.Since(writeStart)
	if err != nil {
		return err
	}
	res.Imported = true
	return nil
}

// loadColumns maps canonical column names to their index in a record.
type loadColumns map[string]int

func (c loadColumns) has(name string) bool { _, ok := c[name]; return ok }

// cell returns a record's cell for a column, and whether the file has the column.
func (c loadColumns) cell(rec []string, name string) (string, bool) {
	i, ok := c[name]
	if !ok || i >= len(rec) {
		return "", ok
	}
	return strings.TrimSpace(rec[i]), true
}

func aliasesOf(name string) []string {
	for _, c := range LoadColumns {
		if c.Name == name {
			return c.Aliases
		}
	}
	return nil
}

// headerName normalizes a header cell: "Card Number" and "card-number" are
// card_number.
func headerName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// loadRecord is one data row and its line.
type loadRecord struct {
	line   int
	fields []string
	// width, when not 0: the row has this many cells, and the header has want.
	width, want int
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readLoadFile reads the header and every row, at most maxRows (RFC 4180; a
// UTF-8 byte order mark, as Excel writes, is skipped). A header row with no
// comma and with semicolons or tabs sets the separator (res.Delimiter), as
// Koha's CSVDelimiter preference would: Excel saves "CSV" with semicolons
// where the comma is the decimal mark.
func readLoadFile(r io.Reader, res *LoadResult, maxRows int) (loadColumns, []loadRecord, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	res.Delimiter = sniffDelimiter(br)
	cr.Comma = res.Delimiter
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, stacks.Errorf(stacks.EINVALID, "The file is empty. Its first row names the columns: card, surname, first_name, category, home_branch, ...")
	} else if err != nil {
		return nil, nil, csvError(err)
	}
	cols := loadColumns{}
	alias := map[string]string{}
	for _, c := range LoadColumns {
		for _, a := range c.Aliases {
			alias[a] = c.Name
		}
	}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\uFEFF")
		}
		if !utf8.ValidString(h) {
			return nil, nil, stacks.Errorf(stacks.EINVALID, "The header row is not UTF-8 text. Save the file as \"CSV UTF-8\" and load it again.")
		}
		name, ok := alias[headerName(h)]
		if !ok {
			res.Unknown = append(res.Unknown, strings.TrimSpace(h))
			continue
		}
		if _, dup := cols[name]; dup {
			return nil, nil, stacks.Errorf(stacks.EINVALID, "The header row names the %s column twice (column %d is %q). Keep one and load the file again.", name, i+1, h)
		}
		cols[name] = i
		res.Columns = append(res.Columns, name)
	}
	var records []loadRecord
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(records) >= maxRows {
			if maxRows < MaxLoadRows {
				return nil, nil, stacks.Errorf(stacks.EINVALID, "The file has more than %d rows, the most one import here takes: the desks wait while it is written. Split it and load the parts one after the other, or ask an administrator to run stacks patrons import, which takes up to %d.", maxRows, MaxLoadRows)
			}
			return nil, nil, stacks.Errorf(stacks.EINVALID, "The file has more than %d rows. Split it and load the parts one after the other.", maxRows)
		}
		lr := loadRecord{line: line, fields: rec}
		if len(rec) != len(header) {
			lr.width, lr.want = len(rec), len(header)
		}
		records = append(records, lr)
	}
	if len(records) == 0 {
		return nil, nil, stacks.Errorf(stacks.EINVALID, "The file has a header row but no patrons.")
	}
	return cols, records, nil
}

// sniffDelimiter reads the header row's separator from the buffered start of
// the file, without consuming it: ',' unless the first line has no comma and has
// a semicolon (';') or a tab.
func sniffDelimiter(br *bufio.Reader) rune {
	b, _ := br.Peek(br.Size())
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	switch {
	case bytes.IndexByte(b, ',') >= 0:
		return ','
	case bytes.IndexByte(b, ';') >= 0:
		return ';'
	case bytes.IndexByte(b, '\t') >= 0:
		return '\t'
	}
	return ','
}

// csvError says where a file stops being CSV.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return stacks.Errorf(stacks.EINVALID, "Line %d is not valid CSV: %s. A cell holding a comma, a quote or a line break is written between double quotes, with each quote inside doubled (\"\"). Nothing was imported.", pe.Line, pe.Err)
	}
	return fmt.Errorf("read the patron file: %w", err)
}

// checkDefaults normalizes the default codes and expiry.
func checkDefaults(opt *LoadOptions) error {
	opt.DefaultCategory = strings.ToUpper(strings.TrimSpace(opt.DefaultCategory))
	opt.DefaultBranch = strings.ToUpper(strings.TrimSpace(opt.DefaultBranch))
	opt.DefaultExpiry = strings.TrimSpace(opt.DefaultExpiry)
	if opt.DefaultExpiry != "" {
		if _, err := time.Parse(db.DayFormat, opt.DefaultExpiry); err != nil {
			return stacks.FieldErrorf("default_expiry", stacks.EINVALID, "Give the default expiry as YYYY-MM-DD (e.g. 2027-08-31), not %q.", opt.DefaultExpiry)
		}
	}
	return nil
}

// snapPatron is an existing patron as a load compares it.
type snapPatron struct {
	id      int64
	in      Input
	expires string
}

// loadSnapshot is what the checks need from the database, read in one read
// transaction: codes, the library's today, and the patrons the file names.
type loadSnapshot struct {
	categories   map[string]int64
	cardMonths   map[string]int
	branches     map[string]int64
	today        time.Time
	byCard       map[string]*snapPatron
	byExternalID map[string]*snapPatron
}

func readSnapshot(tx *db.Tx, cols loadColumns, records []loadRecord) (*loadSnapshot, error) {
	s := &loadSnapshot{categories: map[string]int64{}, cardMonths: map[string]int{}, branches: map[string]int64{},
		byCard: map[string]*snapPatron{}, byExternalID: map[string]*snapPatron{}}
	rows, err := tx.Query(`SELECT code, id, card_months FROM patron_categories`)
	if err != nil {
		return nil, fmt.Errorf("read patron categories: %w", err)
	}
	for rows.Next() {
		var code string
		var id int64
		var months int
		if err := rows.Scan(&code, &id, &months); err != nil {
			rows.Close()
			return nil, err
		}
		s.categories[code], s.cardMonths[code] = id, months
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.Query(`SELECT code, id FROM branches`)
	if err != nil {
		return nil, fmt.Errorf("read branches: %w", err)
	}
	for rows.Next() {
		var code string
		var id int64
		if err := rows.Scan(&code, &id); err != nil {
			rows.Close()
			return nil, err
		}
		s.branches[code] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var tz sql.NullString
	if err := tx.QueryRow(`SELECT ` + timezoneSQL).Scan(&tz); err != nil {
		return nil, fmt.Errorf("read the time zone: %w", err)
	}
	s.today = localToday(tx.Now(), tz)

	// The patrons the file names, by card or external id, in one statement.
	cards, extIDs := []string{}, []string{}
	for _, rec := range records {
		if c, ok := cols.cell(rec.fields, "card"); ok && c != "" {
			cards = append(cards, c, normalizeCard(c))
		}
		if x, ok := cols.cell(rec.fields, "external_id"); ok && x != "" {
			extIDs = append(extIDs, x)
		}
	}
	cj, _ := json.Marshal(cards)
	xj, _ := json.Marshal(extIDs)
	rows, err = tx.Query(`SELECT p.id, p.card, p.surname, p.first_name, p.email, p.phone, p.address,
		c.code, b.code, p.expires_on, p.notes, p.desk_message, coalesce(p.external_id, '')
		FROM patrons p
		JOIN patron_categories c ON c.id = p.category_id
		JOIN branches b ON b.id = p.home_branch_id
		WHERE p.card IN (SELECT value FROM `+jsonValues(tx)+`) OR p.external_id IN (SELECT value FROM `+jsonValues(tx)+`)`, string(cj), string(xj))
	if err != nil {
		return nil, fmt.Errorf("read the patrons the file names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p := &snapPatron{}
		if err := rows.Scan(&p.id, &p.in.Card, &p.in.Surname, &p.in.FirstName, &p.in.Email, &p.in.Phone, &p.in.Address,
			&p.in.CategoryCode, &p.in.HomeBranchCode, &p.expires, &p.in.Notes, &p.in.DeskMessage, &p.in.ExternalID); err != nil {
			return nil, err
		}
		s.byCard[normalizeCard(p.in.Card)] = p
		if p.in.ExternalID != "" {
			s.byExternalID[p.in.ExternalID] = p
		}
	}
	return s, rows.Err()
}

// planRows checks every row and decides what it does.
func planRows(res *LoadResult, cols loadColumns, records []loadRecord, s *loadSnapshot, opt LoadOptions) {
	res.Rows = make([]LoadRow, len(records))
	cardLines := map[string][]int{}
	extLines := map[string][]int{}
	for i, rec := range records {
		row := &res.Rows[i]
		row.Line = rec.line
		planRow(row, cols, rec, s, opt)
		if row.in.Card != "" {
			cardLines[row.in.Card] = append(cardLines[row.in.Card], i)
		}
		if row.extID.Valid {
			extLines[row.extID.String] = append(extLines[row.extID.String], i)
		}
	}
	// A card or an external id twice in the file: every row that has it is bad,
	// since which one should win is the librarian's call.
	dup := func(what string, lines map[string][]int) {
		for key, idx := range lines {
			if len(idx) < 2 {
				continue
			}
			for _, i := range idx {
				var others []string
				for _, j := range idx {
					if j != i {
						others = append(others, strconv.Itoa(res.Rows[j].Line))
					}
				}
				res.Rows[i].Problems = append(res.Rows[i].Problems,
					fmt.Sprintf("%s %s is also on line %s: keep one row per patron.", what, key, strings.Join(others, ", ")))
			}
		}
	}
	dup("card", cardLines)
	dup("external id", extLines)
	cardsInUse(res.Rows)
	for i := range res.Rows {
		row := &res.Rows[i]
		switch {
		case len(row.Problems) > 0:
			row.Action = ""
			res.Bad++
		case row.Action == "create":
			res.Created++
		case row.Action == "update":
			res.Updated++
		default:
			res.Unchanged++
		}
	}
}

// cardsInUse checks the rows giving a card that another patron has in the
// database against the file's final state: a row that gives that patron
// another card frees it (two students swapping cards, matched by external id).
// Otherwise the row is bad, and the message names the other patron's line
// when the file has one. A row freeing a card for a row that turns out bad is
// not enough, so it runs until nothing changes.
func cardsInUse(rows []LoadRow) {
	byPatron := map[int64]int{}
	for i, row := range rows {
		if row.patronID != 0 {
			byPatron[row.patronID] = i
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range rows {
			row := &rows[i]
			other := row.cardTaken
			if other == nil || len(row.Problems) > 0 {
				continue
			}
			j, inFile := byPatron[other.id]
			if inFile && len(rows[j].Problems) == 0 && normalizeCard(rows[j].in.Card) != normalizeCard(row.in.Card) {
				continue // the file moves the other patron off this card
			}
			msg := fmt.Sprintf("card: card number %s is already in use by another patron (%s %s)", row.in.Card, other.in.FirstName, other.in.Surname)
			switch {
			case !inFile:
				msg += "."
			case len(rows[j].Problems) > 0:
				msg += fmt.Sprintf("; line %d gives them another card but has problems of its own: correct it too.", rows[j].Line)
			default:
				msg += fmt.Sprintf(", whose line %d keeps it: give one of them another card.", rows[j].Line)
			}
			row.Problems = append(row.Problems, msg)
			changed = true
		}
	}
}

// planRow checks one row against the snapshot: what it would create or change,
// or every problem it has. The steps are in the order the problems are listed.
func planRow(row *LoadRow, cols loadColumns, rec loadRecord, s *loadSnapshot, opt LoadOptions) {
	p := &rowPlan{row: row, cols: cols, rec: rec, s: s, opt: opt}
	p.checkCells()
	if !p.match() {
		return
	}
	p.merge()
	p.checkInput()
	p.planExpiry()
	p.checkTaken()
	p.takePIN()
	row.in = p.in
	row.Card = p.in.Card
	row.ExternalID = p.in.ExternalID
	row.expires = p.expires
	row.extID = nullIfEmpty(p.in.ExternalID)
	if len(row.Problems) > 0 {
		return
	}
	p.decide()
}

// rowPlan is one row of a load being checked (planRow): the patron it is
// about, if any (old), and what the patron would be after it (in, expires).
type rowPlan struct {
	row  *LoadRow
	cols loadColumns
	rec  loadRecord
	s    *loadSnapshot
	opt  LoadOptions

	// notText are the columns whose cell is not UTF-8, already a problem.
	notText map[string]bool
	hasCard bool
	old     *snapPatron
	in      Input
	expires string
}

func (p *rowPlan) problem(format string, args ...any) {
	p.row.Problems = append(p.row.Problems, fmt.Sprintf(format, args...))
}

func (p *rowPlan) cell(name string) (string, bool) { return p.cols.cell(p.rec.fields, name) }

// checkCells checks the row's shape: as many cells as the header, and text.
func (p *rowPlan) checkCells() {
	if p.rec.width != 0 {
		p.problem("The row has %d cells where the header has %d: check for a missing comma or an unquoted comma in a cell.", p.rec.width, p.rec.want)
	}
	p.notText = map[string]bool{}
	for _, c := range LoadColumns {
		if i, ok := p.cols[c.Name]; ok && i < len(p.rec.fields) && !utf8.ValidString(p.rec.fields[i]) {
			p.notText[c.Name] = true
			p.problem("%s: the text is not UTF-8; save the file as \"CSV UTF-8\".", c.Name)
		}
	}
}

// match finds the patron the row is about, by the cell rows are matched on;
// false if the row has no such cell (a problem that ends the row's checks).
func (p *rowPlan) match() bool {
	card, hasCard := p.cell("card")
	ext, _ := p.cell("external_id")
	p.hasCard = hasCard
	p.row.Card, p.row.ExternalID = normalizeCard(card), ext
	switch p.opt.Match {
	case MatchCard:
		if card == "" {
			p.problem("card: the row has no card number, which rows are matched on.")
			return false
		}
		p.old = p.s.byCard[normalizeCard(card)]
	case MatchExternalID:
		if ext == "" {
			p.problem("external_id: the row has no external id, which rows are matched on.")
			return false
		}
		p.old = p.s.byExternalID[ext]
	}
	return true
}

// merge starts from the patron as stored (an update) or empty (a create), and
// lays the row's cells over it; a new patron gets the load's default category
// and branch where the row gives none.
func (p *rowPlan) merge() {
	if p.old != nil {
		p.in, p.expires = p.old.in, p.old.expires
		p.row.patronID = p.old.id
	}
	take := func(name string, field *string) {
		v, ok := p.cell(name)
		switch {
		case !ok:
		case v != "":
			*field = v
		case p.old != nil && p.opt.ClearEmpty && clearable[name]:
			*field = ""
		}
	}
	in := &p.in
	take("card", &in.Card)
	take("surname", &in.Surname)
	take("first_name", &in.FirstName)
	take("email", &in.Email)
	take("phone", &in.Phone)
	take("address", &in.Address)
	take("category", &in.CategoryCode)
	take("home_branch", &in.HomeBranchCode)
	take("notes", &in.Notes)
	take("external_id", &in.ExternalID)
	if p.old == nil {
		if in.CategoryCode == "" {
			in.CategoryCode = p.opt.DefaultCategory
		}
		if in.HomeBranchCode == "" {
			in.HomeBranchCode = p.opt.DefaultBranch
		}
	}
}

// checkInput runs the patron form's checks, every one of them, and checks the
// category and branch codes against the library's.
func (p *rowPlan) checkInput() {
	if !p.hasCard && p.old == nil {
		p.problem("card: a new patron needs a card number; add a card column to the file.")
	}
	for _, e := range p.in.Problems() {
		if p.notText[e.Field] || p.old == nil && e.Field == "card" && !p.hasCard {
			continue // said above
		}
		p.problem("%s: %s", e.Field, e.Message)
	}
	if p.in.CategoryCode != "" {
		if _, ok := p.s.categories[p.in.CategoryCode]; !ok {
			p.problem("category: there is no patron category %q; the codes are %s.", p.in.CategoryCode, codeList(p.s.categories))
		}
	}
	if p.in.HomeBranchCode != "" {
		if _, ok := p.s.branches[p.in.HomeBranchCode]; !ok {
			p.problem("home_branch: there is no branch with code %q; the codes are %s.", p.in.HomeBranchCode, codeList(p.s.branches))
		}
	}
}

// planExpiry sets the card's expiry: the row's date, else (a new patron) the
// load's default or the category's card length from today.
func (p *rowPlan) planExpiry() {
	today := db.FormatDay(p.s.today)
	if v, _ := p.cell("expires_on"); v != "" {
		t, err := time.Parse(db.DayFormat, v)
		if err != nil {
			p.problem("expires_on: %q is not a date; write it as YYYY-MM-DD, e.g. 2027-08-31.", v)
			return
		}
		p.expires = db.FormatDay(t)
		// A date already past, unless the patron has it already: the card
		// would be expired at once (last year's file loaded again).
		if p.expires < today && (p.old == nil || p.old.expires != p.expires) {
			p.problem("expires_on: %s is before today (%s), so the card would be expired at once; is this last year's file? Correct the date, or leave the cell empty to keep the card's expiry.", p.expires, today)
		}
		return
	}
	if p.old != nil {
		return
	}
	if p.opt.DefaultExpiry != "" {
		p.expires = p.opt.DefaultExpiry
		if p.expires < today {
			p.problem("expires_on: the default expiry %s is before today (%s), so the card would be expired at once; choose a later default expiry.", p.expires, today)
		}
	} else if months, ok := p.s.cardMonths[p.in.CategoryCode]; ok {
		p.expires = db.FormatDay(addMonths(p.s.today, months))
	}
}

// checkTaken refuses an external id another patron has, and notes the patron
// who has the row's card (cardsInUse decides that against the whole file).
func (p *rowPlan) checkTaken() {
	in, old := p.in, p.old
	if in.ExternalID != "" {
		if other := p.s.byExternalID[in.ExternalID]; other != nil && (old == nil || other.id != old.id) {
			p.problem("external_id: %s is already the external id of the patron with card %s.", in.ExternalID, other.in.Card)
		}
	}
	if in.Card != "" && (old == nil || in.Card != normalizeCard(old.in.Card)) {
		if other := p.s.byCard[in.Card]; other != nil && (old == nil || other.id != old.id) {
			p.row.cardTaken = other
		}
	}
}

// takePIN takes the row's PIN: an existing patron's PIN is theirs, and the
// file sets it only when asked (OverwritePINs).
func (p *rowPlan) takePIN() {
	if pin, _ := p.cell("pin"); pin != "" && (p.old == nil || p.opt.OverwritePINs) {
		if err := ValidatePIN(pin); err != nil {
			p.problem("pin: %s", stacks.ErrorMessage(err))
		}
		p.row.pin = pin
	}
}

// decide sets what a good row does: create the patron, or update the fields
// that change (with the audit log's account of each), or nothing.
func (p *rowPlan) decide() {
	row, in, old := p.row, p.in, p.old
	if old == nil {
		row.Action = "create"
		row.auditText = fmt.Sprintf("card %s, %s %s, %s at %s, expires %s (patron load)", in.Card, in.FirstName, in.Surname,
			in.CategoryCode, in.HomeBranchCode, p.expires)
		return
	}
	row.set = map[string]bool{}
	var changes []string
	for _, c := range []struct{ name, was, is string }{
		{"card", old.in.Card, in.Card}, {"surname", old.in.Surname, in.Surname}, {"first_name", old.in.FirstName, in.FirstName},
		{"email", old.in.Email, in.Email}, {"phone", old.in.Phone, in.Phone}, {"address", old.in.Address, in.Address},
		{"category", old.in.CategoryCode, in.CategoryCode}, {"home_branch", old.in.HomeBranchCode, in.HomeBranchCode},
		{"notes", old.in.Notes, in.Notes}, {"expires_on", old.expires, p.expires}, {"external_id", old.in.ExternalID, in.ExternalID},
	} {
		if c.was != c.is {
			row.set[c.name] = true
			row.Changes = append(row.Changes, c.name)
			changes = append(changes, fmt.Sprintf("%s %q -> %q", strings.ReplaceAll(c.name, "_", " "), c.was, c.is))
		}
	}
	if row.pin != "" {
		row.Changes = append(row.Changes, "pin")
		changes = append(changes, "PIN set")
	}
	if len(row.Changes) == 0 {
		row.Action = "unchanged"
		return
	}
	row.Action = "update"
	row.Details = changes
	row.auditText = strings.Join(changes, "; ") + " (patron load)"
}

// codeList lists codes for a message: "ADULT, CHILD, STAFF".
func codeList(m map[string]int64) string {
	codes := make([]string, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return strings.Join(codes, ", ")
}

// hashPINs hashes the good rows' PINs before the write transaction, on the
// bounded pool of package passwords (the one the sign-ins and SIP logins
// compare on), in all of its slots but one where it has several: bcrypt is slow
// on purpose, the write connection must not wait for it, and a file of PINs
// must not take the CPUs from the desks or the sign-ins, which take their turns
// in the pool between the file's PINs.
func hashPINs(ctx context.Context, rows []LoadRow, progress func(hashed, total int)) error {
	var todo []*LoadRow
	for i := range rows {
		if rows[i].pin != "" && len(rows[i].Problems) == 0 && (rows[i].Action == "create" || rows[i].Action == "update") {
			todo = append(todo, &rows[i])
		}
	}
	if len(todo) == 0 {
		return nil
	}
	work := make(chan *LoadRow)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var hashed atomic.Int64
	for range max(1, passwords.Default.Size()-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for row := range work {
				h, err := hashPINOnPool(ctx, row.pin)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("line %d: hash the PIN: %w", row.Line, err)
					}
					mu.Unlock()
					continue
				}
				row.pinHash = h
				n := hashed.Add(1)
				if progress != nil {
					progress(int(n), len(todo))
				}
			}
		}()
	}
	for _, row := range todo {
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		work <- row
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}

// hashPINOnPool hashes one PIN of a load on the pool. A load waits for its
// turn, however long the sign-ins keep the pool: when the pool refuses it
// (passwords.ErrBusy: its queue is full), it tries again a moment later.
func hashPINOnPool(ctx context.Context, pin string) (string, error) {
	for {
		h, err := passwords.Hash(passwords.WithWait(ctx, time.Minute), pin, passwords.BcryptCost)
		if !errors.Is(err, passwords.ErrBusy) {
			return h, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writeRows writes the good rows in the caller's transaction, with one audit
// entry per patron and one for the load.
func writeRows(tx *db.Tx, actor stacks.Actor, res *LoadResult) error {
	ins, err := tx.Prepare(`INSERT INTO patrons (card, surname, first_name, email, phone, address,
		category_id, home_branch_id, expires_on, notes, created_at, external_id, pin_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	if err != nil {
		return fmt.Errorf("prepare patron insert: %w", err)
	}
	// An update sets only the columns its row changes (so that a desk's edit of
	// another field since the file was checked is kept, and indexes on unchanged
	// columns are not touched); rows that change the same columns share a
	// statement.
	updates := map[string]*db.Stmt{}
	audit, err := tx.Prepare(`INSERT INTO audit_log (at, staff_id, actor, action, object_type, object_id, detail)
		VALUES (?, ?, ?, ?, 'patron', ?, ?)`)
	if err != nil {
		return fmt.Errorf("prepare audit: %w", err)
	}
	now := db.FormatTime(tx.Now())
	var staffID sql.NullInt64
	if actor.StaffID != 0 {
		staffID = sql.NullInt64{Int64: actor.StaffID, Valid: true}
	}
	cats, branches, err := codeIDs(tx)
	if err != nil {
		return err
	}
	// Two phases for new cards: each update that changes a card first gives its
	// patron a placeholder no card can be ("~" is not allowed in one), so that
	// cards swapped or passed on within the file never meet in the unique index.
	for _, row := range res.Rows {
		if row.Action == "update" && row.set["card"] {
			if _, err := tx.Exec(`UPDATE patrons SET card = ? WHERE id = ?`, fmt.Sprintf("~load~%d", row.patronID), row.patronID); err != nil {
				return fmt.Errorf("line %d: free the old card: %w", row.Line, err)
			}
		}
	}
	for i := range res.Rows {
		row := &res.Rows[i]
		in := row.in
		switch row.Action {
		case "create":
			err := ins.QueryRow(in.Card, in.Surname, in.FirstName, in.Email, in.Phone, in.Address,
				cats[in.CategoryCode], branches[in.HomeBranchCode], row.expires, in.Notes, now, row.extID, row.pinHash).Scan(&row.patronID)
			if db.IsUniqueViolation(err) {
				return stacks.Errorf(stacks.ECONFLICT, "Line %d: card %s or external id %q was taken by a patron added while the file was being checked. Nothing was imported; load the file again.", row.Line, in.Card, row.ExternalID)
			} else if err != nil {
				return fmt.Errorf("line %d: insert patron: %w", row.Line, err)
			}
			if _, err := audit.Exec(now, staffID, actor.Name, "patron.create", row.patronID, row.auditText); err != nil {
				return fmt.Errorf("line %d: audit: %w", row.Line, err)
			}
		case "update":
			var sets []string
			var args []any
			for _, c := range updateColumns {
				if row.set[c.name] {
					sets = append(sets, c.sql)
					args = append(args, c.value(row))
				}
			}
			if row.pinHash != "" {
				sets = append(sets, "pin_hash = ?, pin_generation = pin_generation + 1")
				args = append(args, row.pinHash)
			}
			q := strings.Join(sets, ", ")
			upd := updates[q]
			if upd == nil {
				if upd, err = tx.Prepare(`UPDATE patrons SET ` + q + ` WHERE id = ?`); err != nil {
					return fmt.Errorf("prepare patron update: %w", err)
				}
				updates[q] = upd
			}
			r, err := upd.Exec(append(args, row.patronID)...)
			if db.IsUniqueViolation(err) {
				return stacks.Errorf(stacks.ECONFLICT, "Line %d: card %s or external id %q was given to another patron while the file was being checked. Nothing was imported; load the file again.", row.Line, in.Card, row.ExternalID)
			} else if err != nil {
				return fmt.Errorf("line %d: update patron %d: %w", row.Line, row.patronID, err)
			}
			if n, err := r.RowsAffected(); err != nil {
				return fmt.Errorf("line %d: update patron %d: %w", row.Line, row.patronID, err)
			} else if n == 0 {
				return stacks.Errorf(stacks.ECONFLICT, "Line %d: the patron with card %s was removed while the file was being checked. Nothing was imported; load the file again.", row.Line, in.Card)
			}
			if _, err := audit.Exec(now, staffID, actor.Name, "patron.update", row.patronID, row.auditText); err != nil {
				return fmt.Errorf("line %d: audit: %w", row.Line, err)
			}
		}
	}
	return tx.Audit(actor, "patron.load", "patron", 0, fmt.Sprintf("patron load of %d rows: %d created, %d updated, %d unchanged, %d bad rows skipped",
		len(res.Rows), res.Created, res.Updated, res.Unchanged, res.Bad))
}

// updateColumns are the columns an update may set, with the value a row gives.
var updateColumns = []struct {
	name, sql string
	value     func(*LoadRow) any
}{
	{"card", "card = ?", func(r *LoadRow) any { return r.in.Card }},
	{"surname", "surname = ?", func(r *LoadRow) any { return r.in.Surname }},
	{"first_name", "first_name = ?", func(r *LoadRow) any { return r.in.FirstName }},
	{"email", "email = ?", func(r *LoadRow) any { return r.in.Email }},
	{"phone", "phone = ?", func(r *LoadRow) any { return r.in.Phone }},
	{"address", "address = ?", func(r *LoadRow) any { return r.in.Address }},
	{"category", "category_id = (SELECT id FROM patron_categories WHERE code = ?)", func(r *LoadRow) any { return r.in.CategoryCode }},
	{"home_branch", "home_branch_id = (SELECT id FROM branches WHERE code = ?)", func(r *LoadRow) any { return r.in.HomeBranchCode }},
	{"notes", "notes = ?", func(r *LoadRow) any { return r.in.Notes }},
	{"expires_on", "expires_on = ?", func(r *LoadRow) any { return r.expires }},
	{"external_id", "external_id = ?", func(r *LoadRow) any { return r.extID }},
}

// codeIDs reads the ids of the category and branch codes inside the write
// transaction (a code removed since the check fails the insert, as it should).
func codeIDs(tx *db.Tx) (cats, branches map[string]any, err error) {
	cats, branches = map[string]any{}, map[string]any{}
	for _, t := range []struct {
		sql string
		m   map[string]any
	}{{`SELECT code, id FROM patron_categories`, cats}, {`SELECT code, id FROM branches`, branches}} {
		rows, err := tx.Query(t.sql)
		if err != nil {
			return nil, nil, fmt.Errorf("read codes: %w", err)
		}
		for rows.Next() {
			var code string
			var id int64
			if err := rows.Scan(&code, &id); err != nil {
				rows.Close()
				return nil, nil, err
			}
			t.m[code] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return cats, branches, nil
}
