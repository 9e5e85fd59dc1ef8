package catalog

// Staged import: a MARC file is read into a batch (import_batches and
// import_batch_records) without touching the catalogue; each record is matched
// against the catalogue (Matcher, but for the barcode rule); staff review the
// batch, choose per rule whether a match overlays the record, is added as a new
// one or is skipped, and commit it in one transaction. A committed batch can be
// undone while none of its copies has circulated.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// Match rules, in the order they are tried.
const (
	RuleNone    = ""
	RuleControl = "001"
	RuleSystem  = "035"
	RuleISBN    = "isbn"
)

// MatchRules are the rules a staged record can match by, in the order tried.
var MatchRules = []string{RuleControl, RuleSystem, RuleISBN}

// RuleLabel is how staff read a match rule.
func RuleLabel(rule string) string {
	switch rule {
	case RuleControl:
		return "control number (001)"
	case RuleSystem:
		return "system number (035 $a)"
	case RuleISBN:
		return "ISBN (020)"
	}
	return "no match"
}

// What the commit does with a matched record.
const (
	ActionOverlay = "overlay"
	ActionNew     = "new"
	ActionSkip    = "skip"
)

// Batch states.
const (
	BatchStaged    = "staged"
	BatchCommitted = "committed"
	BatchUndone    = "undone"
)

// StageOptions are the choices made at upload.
type StageOptions struct {
	Actor    stacks.Actor
	FileName string
	// ItemType, Branch and GenerateItems: as ImportOptions.
	ItemType      string
	Branch        string
	GenerateItems bool
}

// ImportBatch is a staged batch with its counts.
type ImportBatch struct {
	ID            int64
	FileName      string
	State         string
	Actor         string
	Branch        string
	ItemType      string
	GenerateItems bool
	// Actions by rule: RuleControl, RuleSystem, RuleISBN.
	Actions  map[string]string
	Records  int
	New      int
	Matched  map[string]int // by rule
	Errors   int
	Created  int
	Overlaid int
	Skipped  int
	Copies   int
	StagedAt string
	// CommittedAt and UndoneAt are "" until then.
	CommittedAt string
	UndoneAt    string
}

// MatchedTotal is how many records matched by any rule.
func (b *ImportBatch) MatchedTotal() int {
	n := 0
	for _, v := range b.Matched {
		n += v
	}
	return n
}

// StagedRecord is one record of a batch as the review lists it.
type StagedRecord struct {
	Position  int // 0-based, in the file
	Title     string
	Rule      string
	MatchID   int64
	MatchKey  string
	MatchName string // the matched record's title, "" if it is gone
	Error     string
	Outcome   string
	RecordID  int64
}

// maxStageRecords bounds a batch: a larger file is split first.
const maxStageRecords = 200_000

// stageChunk is how many records go in one staging transaction.
const stageChunk = 1000

// StageImport reads the MARC records of rr into a new staged batch, matching
// each against the catalogue, and returns the batch's id. It writes nothing to
// the catalogue. Records that cannot be read or kept are staged as errors with
// their position and reason. A file that cannot be staged to its end (too many
// records, a document that is not well formed, a cancelled context) leaves no
// batch: what was staged of it is deleted.
func StageImport(ctx context.Context, d *db.DB, rr marc.RecordReader, opt StageOptions) (int64, error) {
	id, err := createBatch(ctx, d, opt)
	if err != nil {
		return 0, err
	}
	if err := stageRecords(ctx, d, rr, id, opt); err != nil {
		// The batch is deleted even when ctx is what failed.
		if derr := deleteBatch(context.WithoutCancel(ctx), d, id); derr != nil {
			return 0, errors.Join(err, derr)
		}
		return 0, err
	}
	return id, nil
}

// deleteBatch deletes a batch that could not be staged, and its records.
func deleteBatch(ctx context.Context, d *db.DB, id int64) error {
	return d.Write(ctx, func(tx *db.Tx) error {
		// Only a batch still staged: one committed meanwhile keeps its records.
		if _, err := tx.Exec(`DELETE FROM import_batch_records WHERE batch_id IN (SELECT id FROM import_batches WHERE id = ? AND state = ?)`, id, BatchStaged); err != nil {
			return fmt.Errorf("delete the records of unfinished batch %d: %w", id, err)
		}
		if _, err := tx.Exec(`DELETE FROM import_batches WHERE id = ? AND state = ?`, id, BatchStaged); err != nil {
			return fmt.Errorf("delete unfinished batch %d: %w", id, err)
		}
		return nil
	})
}

// createBatch adds the batch row, empty, once the codes are checked.
func createBatch(ctx context.Context, d *db.DB, opt StageOptions) (int64, error) {
	var id int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		if err := checkCodes(tx, opt.Branch, opt.ItemType); err != nil {
			return err
		}
		var staff sql.NullInt64
		if opt.Actor.StaffID != 0 {
			staff = sql.NullInt64{Int64: opt.Actor.StaffID, Valid: true}
		}
		var err error
		id, err = tx.InsertID(`INSERT INTO import_batches (file_name, staff_id, actor, branch, item_type, generate_items, staged_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, opt.FileName, staff, opt.Actor.Name, strings.ToUpper(opt.Branch),
			strings.ToUpper(opt.ItemType), boolInt(opt.GenerateItems), db.FormatTime(tx.Now()))
		return err
	})
	return id, err
}

// stageRecords reads rr into batch id, a transaction per stageChunk records,
// and sets the batch's counts.
func stageRecords(ctx context.Context, d *db.DB, rr marc.RecordReader, id int64, opt StageOptions) error {
	if err := BuildSystemNumbers(ctx, d); err != nil {
		return err
	}
	m := NewMatcher()
	type staged struct {
		pos                    int
		source, title, err     string
		rule, key              string
		matchID                int64
		rec                    *marc.Record
		needsMatch, readFailed bool
	}
	var counts struct{ records, matched, errors int }
	pos := 0
	done := false
	for !done {
		var chunk []staged
		for len(chunk) < stageChunk {
			rec, err := rr.Next()
			if err == nil || errors.As(err, new(*marc.RecordError)) {
				if pos >= maxStageRecords {
					return stacks.FieldErrorf("file", stacks.EINVALID, "The file has more than %d records. Split it and stage the parts one after the other.", maxStageRecords)
				}
			}
			var rerr *marc.RecordError
			switch {
			case err == io.EOF:
				done = true
			case errors.As(err, &rerr):
				chunk = append(chunk, staged{pos: pos, err: rerr.Reason, readFailed: true})
				pos++
				continue
			case err != nil:
				if mf := malformed(err); mf != nil {
					return mf
				}
				return fmt.Errorf("read record %d: %w", pos, err)
			default:
				s := staged{pos: pos, title: BibOf(rec).Title}
				if n, err := normalMARC(rec); err != nil {
					s.err = strings.TrimSuffix(stacks.ErrorMessage(err), ".")
				} else if s.source, err = marc.ToXML(n); err != nil {
					s.err = "cannot be stored: " + err.Error()
				} else {
					s.rec, s.needsMatch = n, true
				}
				chunk = append(chunk, s)
				pos++
				continue
			}
			break
		}
		if len(chunk) == 0 {
			break
		}
		err := d.Write(ctx, func(tx *db.Tx) error {
			var recs []*marc.Record
			for _, s := range chunk {
				if s.needsMatch {
					recs = append(recs, s.rec)
				}
			}
			if err := m.Prefetch(tx, recs); err != nil {
				return err
			}
			rows := make([][]any, 0, len(chunk))
			for i := range chunk {
				s := &chunk[i]
				if s.needsMatch {
					s.rule, s.matchID, s.key = m.Match(s.rec)
				}
				var match sql.NullInt64
				if s.matchID != 0 {
					match = sql.NullInt64{Int64: s.matchID, Valid: true}
				}
				rows = append(rows, []any{id, s.pos, s.source, s.title, s.rule, match, s.key, s.err})
			}
			if err := bulk(tx, `INSERT INTO import_batch_records (batch_id, position, marc, title, match_rule, match_id, match_key, error) VALUES `,
				"(?, ?, ?, ?, ?, ?, ?, ?)", "", rows); err != nil {
				return fmt.Errorf("stage records: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, s := range chunk {
			counts.records++
			switch {
			case s.err != "":
				counts.errors++
			case s.rule != RuleNone:
				counts.matched++
			}
		}
	}
	return d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`UPDATE import_batches SET staged_records = ?, matched = ?, errors = ? WHERE id = ?`,
			counts.records, counts.matched, counts.errors, id); err != nil {
			return err
		}
		return tx.Audit(opt.Actor, "catalog.import.stage", "import_batch", id, fmt.Sprintf("%q: %d records, %d matching the catalogue, %d errors",
			opt.FileName, counts.records, counts.matched, counts.errors))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkCodes refuses a branch or item type code that names none.
func checkCodes(tx *db.Tx, branch, itemType string) error {
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM branches WHERE upper(code) = upper(?)`, branch).Scan(&n); err != nil {
		return err
	} else if n == 0 {
		return stacks.FieldErrorf("branch", stacks.EINVALID, "There is no branch with code %q: choose the branch for copies the records do not place.", branch)
	}
	if err := tx.QueryRow(`SELECT count(*) FROM item_types WHERE upper(code) = upper(?)`, itemType).Scan(&n); err != nil {
		return err
	} else if n == 0 {
		return stacks.FieldErrorf("item_type", stacks.EINVALID, "There is no item type with code %q: choose the type for copies the records do not type.", itemType)
	}
	return nil
}

// Matcher finds the catalogue records an incoming record matches, by the
// rules of MatchRules in their order: its 001 as a record's control number,
// an 035 $a as one of a record's 035 $a (systemKey) or as its control number
// (with or without the "(code)" prefix), any 020 ISBN in either
// its ISBN-10 or its ISBN-13 form as a record's ISBN; and, when
// ByBarcode is set, a copy's barcode (RuleBarcode, for a record with none of
// those numbers). Prefetch reads what a set of records matches in a few
// statements; Match and Matches then answer from it. Every importer (a staged
// batch, a direct import, a copy-catalogued record) matches through it.
type Matcher struct {
	// ByBarcode adds RuleBarcode after the others.
	ByBarcode bool
	// system maps 035 $a keys to the records that carry them, by id: the
	// records of a prefetch's keys, read from record_system_numbers.
	system map[string][]int64
	// control, isbn and barcode are the records the prefetched records'
	// numbers match, by id.
	control, isbn, barcode map[string][]int64
}

// RecordMatch is one record an incoming record matches: the rule that found
// it, the incoming record's value that matched, and the record.
type RecordMatch struct {
	Rule     string
	Key      string
	RecordID int64
}

// RuleBarcode matches a record without 001, 035 or ISBN to the record that
// holds one of its copies' barcodes (Matcher.ByBarcode).
const RuleBarcode = "barcode"

// NewMatcher returns an empty Matcher; Prefetch fills it. Its caller has
// called BuildSystemNumbers, so that an 035 matches records older than the
// index too.
func NewMatcher() *Matcher {
	return &Matcher{system: map[string][]int64{}}
}

// prefetchSystem reads the records keys may match from record_system_numbers
// (BuildSystemNumbers, which the importers call first, has filled it).
func (m *Matcher) prefetchSystem(tx *db.Tx, keys []string) error {
	m.system = map[string][]int64{}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	for _, part := range chunks(args, 500) {
		if err := readMatches(tx, `SELECT key, record_id FROM record_system_numbers WHERE key IN (?`+strings.Repeat(", ?", len(part)-1)+`) ORDER BY 2`, part, m.system); err != nil {
			return fmt.Errorf("match by 035: %w", err)
		}
	}
	return nil
}

// Prefetch reads the records that recs' numbers match, a few statements for
// the lot; Match and Matches answer for these records until the next Prefetch.
func (m *Matcher) Prefetch(tx *db.Tx, recs []*marc.Record) error {
	m.control, m.isbn, m.barcode = map[string][]int64{}, map[string][]int64{}, map[string][]int64{}
	var controls, isbns, barcodes []any
	var system []string
	for _, rec := range recs {
		if cn := strings.TrimSpace(rec.ControlField("001")); cn != "" {
			controls = append(controls, cn)
		}
		system = append(system, systemKeys(rec)...)
		for _, v := range systemControls(rec) {
			controls = append(controls, v)
		}
		for _, isbn := range recordISBNs(rec) {
			for _, f := range ISBNForms(isbn) {
				isbns = append(isbns, f)
			}
		}
		if m.ByBarcode {
			for _, bc := range recordBarcodes(rec) {
				barcodes = append(barcodes, bc)
			}
		}
	}
	if err := m.prefetchSystem(tx, system); err != nil {
		return err
	}
	for _, q := range []struct {
		name, query string
		keys        []any
		into        map[string][]int64
	}{
		{"control number", `SELECT control_number, id FROM records WHERE control_number <> '' AND control_number IN `, controls, m.control},
		{"ISBN", `SELECT isbn, id FROM records WHERE isbn <> '' AND isbn IN `, isbns, m.isbn},
		{"barcode", `SELECT barcode, record_id FROM items WHERE barcode IN `, barcodes, m.barcode},
	} {
		for _, part := range chunks(q.keys, 500) {
			if err := readMatches(tx, q.query+`(?`+strings.Repeat(", ?", len(part)-1)+`) ORDER BY 2`, part, q.into); err != nil {
				return fmt.Errorf("match by %s: %w", q.name, err)
			}
		}
	}
	return nil
}

// readMatches adds the (key, id) rows of query, by id, to into.
func readMatches(tx *db.Tx, query string, args []any, into map[string][]int64) error {
	rows, err := tx.Query(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			return err
		}
		into[k] = append(into[k], id)
	}
	return rows.Err()
}

// Add makes the Matcher match rec's numbers to record id from now on: a record
// an import has just written, which later records of the same import may match.
// It adds what Prefetch would read back from the database for that record (the
// ISBN column keeps the first 020 only), so that a match does not depend on
// whether the two records fell in one batch or in two.
func (m *Matcher) Add(rec *marc.Record, id int64) {
	add := func(into map[string][]int64, k string) {
		if into != nil && k != "" && !slices.Contains(into[k], id) {
			into[k] = append(into[k], id)
			slices.Sort(into[k])
		}
	}
	add(m.control, strings.TrimSpace(rec.ControlField("001")))
	for _, k := range systemKeys(rec) {
		add(m.system, k)
	}
	if isbns := recordISBNs(rec); len(isbns) > 0 {
		add(m.isbn, isbns[0])
	}
	for _, bc := range recordBarcodes(rec) {
		add(m.barcode, bc)
	}
}

// systemControls are the control numbers a record's 035 $a may be: each as
// written and without its "(code)" prefix (controlForms).
func systemControls(rec *marc.Record) []string {
	var out []string
	for _, f := range rec.FieldsByTag("035") {
		for _, v := range f.Subs('a') {
			out = append(out, controlForms(v)...)
		}
	}
	return out
}

// controlForms are the control numbers an 035 $a v may be another record's
// 001 as: v, and v without its "(code)" prefix ("(OCoLC)12345", "12345").
func controlForms(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	out := []string{v}
	if i := strings.IndexByte(v, ')'); strings.HasPrefix(v, "(") && i > 0 && i < len(v)-1 {
		out = append(out, strings.TrimSpace(v[i+1:]))
	}
	return out
}

// recordISBNs are the normalised ISBNs of a record's 020 $a.
func recordISBNs(rec *marc.Record) []string {
	var out []string
	for _, f := range rec.FieldsByTag("020") {
		if isbn := NormalizeISBN(f.Sub('a')); isbn != "" {
			out = append(out, isbn)
		}
	}
	return out
}

// recordBarcodes are the barcodes of a record's holdings.
func recordBarcodes(rec *marc.Record) []string {
	var out []string
	for _, h := range HoldingsOf(rec) {
		if bc := strings.TrimSpace(h.Barcode); bc != "" {
			out = append(out, bc)
		}
	}
	return out
}

// Match returns the first rule rec matches by, the record matched and the
// value, from what Prefetch read; the first record, by id, when several
// match.
func (m *Matcher) Match(rec *marc.Record) (rule string, id int64, key string) {
	if all := m.matches(rec, true); len(all) > 0 {
		return all[0].Rule, all[0].RecordID, all[0].Key
	}
	return RuleNone, 0, ""
}

// Matches lists every record rec matches, each once, under the first rule that
// found it, the rules in their order and each rule's records by id.
func (m *Matcher) Matches(rec *marc.Record) []RecordMatch {
	return m.matches(rec, false)
}

func (m *Matcher) matches(rec *marc.Record, first bool) []RecordMatch {
	var out []RecordMatch
	seen := map[int64]bool{}
	// add lists ids under rule; done says Match has its answer.
	add := func(rule, key string, ids []int64) (done bool) {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, RecordMatch{Rule: rule, Key: key, RecordID: id})
			}
		}
		return first && len(out) > 0
	}
	if cn := strings.TrimSpace(rec.ControlField("001")); cn != "" {
		if add(RuleControl, cn, m.control[cn]) {
			return out
		}
	}
	for _, f := range rec.FieldsByTag("035") {
		for _, v := range f.Subs('a') {
			if k := systemKey(v); k != "" {
				ids := slices.Clone(m.system[k])
				for _, c := range controlForms(v) {
					ids = append(ids, m.control[c]...)
				}
				slices.Sort(ids)
				if add(RuleSystem, strings.TrimSpace(v), ids) {
					return out
				}
			}
		}
	}
	for _, isbn := range recordISBNs(rec) {
		var ids []int64
		for _, f := range ISBNForms(isbn) {
			ids = append(ids, m.isbn[f]...)
		}
		slices.Sort(ids)
		if add(RuleISBN, isbn, ids) {
			return out
		}
	}
	if m.ByBarcode && len(out) == 0 && strings.TrimSpace(rec.ControlField("001")) == "" && len(recordISBNs(rec)) == 0 && len(systemKeys(rec)) == 0 {
		// A record without those numbers is still the same record when it
		// carries a copy the catalogue has.
		for _, bc := range recordBarcodes(rec) {
			if add(RuleBarcode, bc, m.barcode[bc]) {
				return out
			}
		}
	}
	return out
}

// systemKeys are the match keys of a record's 035 $a.
func systemKeys(rec *marc.Record) []string {
	var keys []string
	for _, f := range rec.FieldsByTag("035") {
		for _, v := range f.Subs('a') {
			if k := systemKey(v); k != "" {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// systemKey is the value an 035 $a matches by: an OCLC number, written with
// or without its "(OCoLC)" prefix and its "ocm", "ocn" or "on" prefix and
// leading zeros, is its digits; a number another organisation assigned keeps
// its "(code)" prefix, since the same digits from two sources are two numbers.
func systemKey(v string) string {
	v = strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(v, "(OCoLC)"); ok {
		v = strings.TrimSpace(rest)
	} else if strings.HasPrefix(v, "(") {
		return strings.ToUpper(strings.Join(strings.Fields(v), ""))
	}
	for _, p := range []string{"ocm", "ocn", "on"} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			v = rest
			break
		}
	}
	v = strings.TrimLeft(v, "0")
	if v == "" {
		return ""
	}
	return v
}

// FindImportBatch returns batch id with its counts.
func FindImportBatch(tx *db.Tx, id int64) (*ImportBatch, error) {
	b := &ImportBatch{ID: id, Actions: map[string]string{}, Matched: map[string]int{}}
	var gen int
	var committed, undone sql.NullString
	var a001, a035, aisbn string
	err := tx.QueryRow(`SELECT file_name, state, actor, branch, item_type, generate_items, action_001, action_035, action_isbn,
		staged_records, errors, created, overlaid, skipped, copies, staged_at, committed_at, undone_at FROM import_batches WHERE id = ?`, id).Scan(
		&b.FileName, &b.State, &b.Actor, &b.Branch, &b.ItemType, &gen, &a001, &a035, &aisbn,
		&b.Records, &b.Errors, &b.Created, &b.Overlaid, &b.Skipped, &b.Copies, &b.StagedAt, &committed, &undone)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "There is no import batch %d.", id)
	} else if err != nil {
		return nil, fmt.Errorf("find import batch %d: %w", id, err)
	}
	b.GenerateItems = gen != 0
	b.Actions[RuleControl], b.Actions[RuleSystem], b.Actions[RuleISBN] = a001, a035, aisbn
	b.CommittedAt, b.UndoneAt = committed.String, undone.String
	rows, err := tx.Query(`SELECT match_rule, count(*) FROM import_batch_records WHERE batch_id = ? AND error = '' GROUP BY match_rule`, id)
	if err != nil {
		return nil, fmt.Errorf("count import batch %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rule string
		var n int
		if err := rows.Scan(&rule, &n); err != nil {
			return nil, err
		}
		if rule == RuleNone {
			b.New = n
		} else {
			b.Matched[rule] = n
		}
	}
	return b, rows.Err()
}

// ImportBatches lists the newest batches first, with their counts from the
// staging and the commit (not the counts by rule: FindImportBatch has them).
func ImportBatches(tx *db.Tx, limit int) ([]*ImportBatch, error) {
	rows, err := tx.Query(`SELECT id, file_name, state, actor, staged_records, matched, errors, created, overlaid, skipped, copies, staged_at
		FROM import_batches ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list import batches: %w", err)
	}
	defer rows.Close()
	var out []*ImportBatch
	for rows.Next() {
		b := &ImportBatch{}
		var matched int
		if err := rows.Scan(&b.ID, &b.FileName, &b.State, &b.Actor, &b.Records, &matched, &b.Errors, &b.Created, &b.Overlaid, &b.Skipped, &b.Copies, &b.StagedAt); err != nil {
			return nil, err
		}
		b.New = b.Records - matched - b.Errors
		out = append(out, b)
	}
	return out, rows.Err()
}

// Staged record lists: new records, errors, or the matches of one rule.
const (
	ListNew    = "new"
	ListErrors = "errors"
)

// StagedRecords returns a page of a batch's records of one list (ListNew,
// ListErrors or a match rule), in file order, and how many the list has.
func StagedRecords(tx *db.Tx, batchID int64, list string, offset, limit int) ([]StagedRecord, int, error) {
	var where string
	var args []any
	switch list {
	case ListNew:
		where, args = `error = '' AND match_rule = ''`, nil
	case ListErrors:
		where = `error <> ''`
	case RuleControl, RuleSystem, RuleISBN:
		where, args = `error = '' AND match_rule = ?`, []any{list}
	default:
		return nil, 0, stacks.Errorf(stacks.EINVALID, "There is no list %q: choose new, errors, 001, 035 or isbn.", list)
	}
	var total int
	if err := tx.QueryRow(`SELECT count(*) FROM import_batch_records WHERE batch_id = ? AND `+where, append([]any{batchID}, args...)...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count staged records: %w", err)
	}
	rows, err := tx.Query(`SELECT s.position, s.title, s.match_rule, coalesce(s.match_id, 0), s.match_key, coalesce(r.title, ''), s.error, s.outcome, coalesce(s.record_id, 0)
		FROM import_batch_records s LEFT JOIN records r ON r.id = s.match_id
		WHERE s.batch_id = ? AND `+where+` ORDER BY s.position LIMIT ? OFFSET ?`, append(append([]any{batchID}, args...), limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list staged records: %w", err)
	}
	defer rows.Close()
	var out []StagedRecord
	for rows.Next() {
		var s StagedRecord
		if err := rows.Scan(&s.Position, &s.Title, &s.Rule, &s.MatchID, &s.MatchKey, &s.MatchName, &s.Error, &s.Outcome, &s.RecordID); err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	return out, total, rows.Err()
}

// SetImportActions sets what the commit does with each rule's matches
// (ActionOverlay, ActionNew or ActionSkip), while the batch is staged.
func SetImportActions(tx *db.Tx, actor stacks.Actor, batchID int64, actions map[string]string) error {
	b, err := FindImportBatch(tx, batchID)
	if err != nil {
		return err
	}
	if b.State != BatchStaged {
		return stacks.Errorf(stacks.ECONFLICT, "Batch %d is %s: its actions can no longer change.", batchID, b.State)
	}
	for _, rule := range MatchRules {
		a, ok := actions[rule]
		if !ok {
			continue
		}
		switch a {
		case ActionOverlay, ActionNew, ActionSkip:
		default:
			return stacks.FieldErrorf("action_"+rule, stacks.EINVALID, "Choose overlay, add as new or skip for the matches by %s.", RuleLabel(rule))
		}
		b.Actions[rule] = a
	}
	if _, err := tx.Exec(`UPDATE import_batches SET action_001 = ?, action_035 = ?, action_isbn = ? WHERE id = ?`,
		b.Actions[RuleControl], b.Actions[RuleSystem], b.Actions[RuleISBN], batchID); err != nil {
		return fmt.Errorf("set the actions of batch %d: %w", batchID, err)
	}
	return tx.Audit(actor, "catalog.import.actions", "import_batch", batchID, fmt.Sprintf("001: %s, 035: %s, ISBN: %s",
		b.Actions[RuleControl], b.Actions[RuleSystem], b.Actions[RuleISBN]))
}
