package catalog

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// A record's kept MARC (records.marc, MARCXML) is the source of truth: its
// title, author, ISBN, publisher, year, subjects and control number columns are
// derived from it (BibOf) on every save, so the two never disagree. The quick
// form writes through to the MARC (writeThrough), the MARC editor replaces it.

// defaultLeader is the leader of a record made from the quick form: a book
// (language material, monograph), Unicode.
const defaultLeader = "00000nam a2200000 a 4500"

// bibInput is a Bib as the quick form shows it.
func bibInput(b Bib) RecordInput {
	in := RecordInput{Title: b.Title, Author: b.Author, ISBN: b.ISBN, Publisher: b.Publisher, Subjects: strings.Join(b.Subjects, "\n")}
	if b.Year > 0 {
		in.Year = strconv.Itoa(b.Year)
	}
	return in
}

// keptMARC returns the record a row keeps: its MARC source, or, for a record
// typed before records kept MARC, one made from its fields (bibFields). A
// record whose fields were edited while its MARC was left as imported gets the
// edits written through to its MARC (writeThrough), so that nothing of either
// is lost.
func keptMARC(b Bib, source string) *marc.Record {
	var rec *marc.Record
	if source != "" {
		if r, err := marc.FromXML(source); err == nil {
			rec = r
		}
	}
	if rec == nil {
		return &marc.Record{Leader: defaultLeader, Fields: bibFields(b)}
	}
	if derived := BibOf(rec); !sameBib(derived, b) {
		writeThrough(rec, bibInput(derived), bibInput(b))
		if b.ControlNumber != derived.ControlNumber {
			setControl(rec, "001", b.ControlNumber)
		}
	}
	return rec
}

// sameBib reports whether a MARC record maps to the catalogue's fields.
func sameBib(a, b Bib) bool {
	return a.Title == b.Title && a.Author == b.Author && a.ISBN == b.ISBN && a.Publisher == b.Publisher &&
		a.Year == b.Year && slices.Equal(a.Subjects, b.Subjects) && a.ControlNumber == b.ControlNumber
}

// writeThrough changes rec so that it says what the quick form in says where it
// differs from old (the form as rec read before the edit), changing only the
// subfields the form edits: the title is 245 $a (a title that still ends with
// the subtitle and part the form showed replaces $a alone, one whose subtitle
// was edited too replaces $a and $b; $c and the indicators stay), the author the main entry's $a, the ISBN the first 020 $a
// with an ISBN, the publisher and year the publication field's $b and $c (264
// or 260, whichever BibOf reads), the subjects the 6XX fields that read as the
// headings removed (gone) and a 650 for each heading added. A field the form
// did not change is left as it was.
func writeThrough(rec *marc.Record, old, in RecordInput) {
	if in.Title != old.Title {
		setTitle(rec, old.Title, in.Title)
	}
	if in.Author != old.Author {
		setAuthor(rec, in.Author)
	}
	if in.ISBN != old.ISBN {
		setISBN(rec, in.ISBN)
	}
	if in.Publisher != old.Publisher || in.Year != old.Year {
		setPublication(rec, in.Publisher != old.Publisher, in.Publisher, in.Year != old.Year, old.Year, in.Year)
	}
	if in.Subjects != old.Subjects {
		setSubjects(rec, lines(old.Subjects), lines(in.Subjects))
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// punctSuffix returns the ISBD punctuation that ends v (" /", " :", ",", "."):
// what trimPunct removes, kept when a value is replaced.
func punctSuffix(v string) string {
	core := trimPunct(v)
	v = strings.TrimLeft(v, " ")
	if core == "" || !strings.HasPrefix(v, core) {
		return ""
	}
	return v[len(core):]
}

// replaceSub sets the first subfield code of f to value, keeping the old
// value's final punctuation, or adds it first if f has none.
func replaceSub(f *marc.Field, code byte, value string) {
	for i, s := range f.Subfields {
		if s.Code == code {
			f.Subfields[i].Value = value + punctSuffix(s.Value)
			return
		}
	}
	f.Subfields = append([]marc.Subfield{{Code: code, Value: value}}, f.Subfields...)
}

// removeSub removes every subfield code of f.
func removeSub(f *marc.Field, code byte) {
	f.Subfields = slices.DeleteFunc(f.Subfields, func(s marc.Subfield) bool { return s.Code == code })
}

// fieldIndex returns the index of the first field with the tag, or -1.
func fieldIndex(rec *marc.Record, tag string) int {
	return slices.IndexFunc(rec.Fields, func(f marc.Field) bool { return f.Tag == tag })
}

// insertField adds f after the last field whose tag sorts before or with its own.
func insertField(rec *marc.Record, f marc.Field) {
	at := 0
	for i := len(rec.Fields) - 1; i >= 0; i-- {
		if rec.Fields[i].Tag <= f.Tag {
			at = i + 1
			break
		}
	}
	rec.Fields = slices.Insert(rec.Fields, at, f)
}

func setControl(rec *marc.Record, tag, value string) {
	i := fieldIndex(rec, tag)
	switch {
	case i >= 0 && value == "":
		rec.Fields = slices.Delete(rec.Fields, i, i+1)
	case i >= 0:
		rec.Fields[i].Value = value
	case value != "":
		insertField(rec, marc.Field{Tag: tag, Value: value})
	}
}

func setTitle(rec *marc.Record, oldTitle, title string) {
	i := fieldIndex(rec, "245")
	if i < 0 {
		insertField(rec, marc.Field{Tag: "245", Ind1: '0', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: title}}})
		return
	}
	f := &rec.Fields[i]
	// The form showed "$a: $b. $n, $p"; what follows $a there, still at the
	// end of the new title, stays in its subfields.
	if a := trimPunct(f.Sub('a')); a != "" && strings.HasPrefix(oldTitle, a) {
		if rest := oldTitle[len(a):]; rest != "" && strings.HasSuffix(title, rest) && len(title) > len(rest) {
			replaceSub(f, 'a', strings.TrimSpace(title[:len(title)-len(rest)]))
			return
		}
	}
	// A title and subtitle ("$a: $b", no part) edited together: each goes to
	// its subfield.
	if f.Sub('b') != "" && len(f.Subs('n'))+len(f.Subs('p')) == 0 {
		if main, sub, ok := strings.Cut(title, ": "); ok && strings.TrimSpace(main) != "" && strings.TrimSpace(sub) != "" {
			replaceSub(f, 'a', strings.TrimSpace(main))
			replaceSub(f, 'b', strings.TrimSpace(sub))
			return
		}
	}
	replaceSub(f, 'a', title)
}

func setAuthor(rec *marc.Record, author string) {
	for _, tag := range []string{"100", "110", "111"} {
		if i := fieldIndex(rec, tag); i >= 0 {
			if author == "" {
				rec.Fields = slices.Delete(rec.Fields, i, i+1)
				return
			}
			f := &rec.Fields[i]
			// The form showed "$a $b" of a corporate name.
			if b := trimPunct(f.Sub('b')); tag != "100" && b != "" && strings.HasSuffix(author, " "+b) {
				author = strings.TrimSuffix(author, " "+b)
			}
			replaceSub(f, 'a', author)
			return
		}
	}
	if author != "" {
		insertField(rec, marc.Field{Tag: "100", Ind1: '1', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: author}}})
	}
}

func setISBN(rec *marc.Record, isbn string) {
	for i := range rec.Fields {
		f := &rec.Fields[i]
		if f.Tag != "020" || NormalizeISBN(f.Sub('a')) == "" {
			continue
		}
		if isbn == "" {
			removeSub(f, 'a')
			if len(f.Subfields) == 0 {
				rec.Fields = slices.Delete(rec.Fields, i, i+1)
			}
			return
		}
		// Keep a qualifier typed after the number: "0441478123 (pbk.)".
		old := strings.TrimSpace(f.Sub('a'))
		qualifier := ""
		if j := strings.IndexAny(old, " ("); j >= 0 {
			qualifier = old[j:]
		}
		for k, s := range f.Subfields {
			if s.Code == 'a' {
				f.Subfields[k].Value = isbn + qualifier
				break
			}
		}
		return
	}
	if isbn != "" {
		insertField(rec, marc.Field{Tag: "020", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: isbn}}})
	}
}

func setPublication(rec *marc.Record, setPublisher bool, publisher string, setYear bool, oldYear, year string) {
	i := publicationIndex(rec)
	if i < 0 {
		if publisher == "" && year == "" {
			return
		}
		f := marc.Field{Tag: "264", Ind1: ' ', Ind2: '1'}
		if publisher != "" {
			f.Subfields = append(f.Subfields, marc.Subfield{Code: 'b', Value: publisher})
		}
		if year != "" {
			f.Subfields = append(f.Subfields, marc.Subfield{Code: 'c', Value: year})
		}
		insertField(rec, f)
		return
	}
	f := &rec.Fields[i]
	if setPublisher {
		if publisher == "" {
			removeSub(f, 'b')
		} else {
			replaceSub(f, 'b', publisher)
		}
	}
	if setYear {
		c := slices.IndexFunc(f.Subfields, func(s marc.Subfield) bool { return s.Code == 'c' })
		switch {
		case year == "":
			removeSub(f, 'c')
		case c >= 0 && oldYear != "" && strings.Contains(f.Subfields[c].Value, oldYear):
			// "c1969." becomes "c1970.".
			f.Subfields[c].Value = strings.Replace(f.Subfields[c].Value, oldYear, year, 1)
		case c >= 0:
			f.Subfields[c].Value = year + punctSuffix(f.Subfields[c].Value)
		default:
			f.Subfields = append(f.Subfields, marc.Subfield{Code: 'c', Value: year})
		}
	}
	if len(f.Subfields) == 0 {
		rec.Fields = slices.Delete(rec.Fields, i, i+1)
	}
}

func setSubjects(rec *marc.Record, old, headings []string) {
	keep := map[string]bool{}
	for _, h := range headings {
		keep[h] = true
	}
	rec.Fields = slices.DeleteFunc(rec.Fields, func(f marc.Field) bool {
		return slices.Contains(subjectTags, f.Tag) && !keep[subjectOf(f)] && slices.Contains(old, subjectOf(f))
	})
	for _, h := range headings {
		if !slices.Contains(old, h) {
			parts := strings.Split(h, " -- ")
			sf := []marc.Subfield{{Code: 'a', Value: parts[0]}}
			for _, p := range parts[1:] {
				sf = append(sf, marc.Subfield{Code: 'x', Value: p})
			}
			insertField(rec, marc.Field{Tag: "650", Ind1: ' ', Ind2: '0', Subfields: sf})
		}
	}
}

// recordRow is a record's row and its latest version, as a write reads them
// (one statement).
type recordRow struct {
	bib       Bib
	source    string
	updatedAt string
	// version is the record's latest version (0 if none was kept) and
	// versionSource its MARC.
	version       int
	versionSource string
}

// recordRowsQuery reads records' rows and latest versions; a WHERE on r.id
// follows.
const recordRowsQuery = `SELECT r.id, r.title, r.author, r.isbn, r.publisher, coalesce(r.year, 0), r.subjects, r.control_number, r.marc, r.updated_at,
	coalesce(v.version, 0), coalesce(v.marc, '')
	FROM records r LEFT JOIN record_versions v ON v.record_id = r.id
		AND v.version = (SELECT max(version) FROM record_versions WHERE record_id = r.id)
	WHERE r.id `

func scanRecordRow(s interface{ Scan(...any) error }) (int64, recordRow, error) {
	var id int64
	var r recordRow
	var subjects string
	err := s.Scan(&id, &r.bib.Title, &r.bib.Author, &r.bib.ISBN, &r.bib.Publisher, &r.bib.Year, &subjects,
		&r.bib.ControlNumber, &r.source, &r.updatedAt, &r.version, &r.versionSource)
	r.bib.Subjects = lines(subjects)
	return id, r, err
}

func readRecordRow(tx *db.Tx, id int64) (recordRow, error) {
	_, r, err := scanRecordRow(tx.QueryRow(recordRowsQuery+`= ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, errNoRecord(id)
	} else if err != nil {
		return r, fmt.Errorf("find record %d: %w", id, err)
	}
	return r, nil
}

// readRecordRows reads the rows and latest versions of records ids (those
// that exist), a statement per 500.
func readRecordRows(tx *db.Tx, ids []int64) (map[int64]*recordRow, error) {
	out := map[int64]*recordRow{}
	for _, part := range chunks(ids, 500) {
		in, args := idArgs(part)
		rows, err := tx.Query(recordRowsQuery+`IN (`+in+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read records: %w", err)
		}
		for rows.Next() {
			id, r, err := scanRecordRow(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read records: %w", err)
			}
			out[id] = &r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read records: %w", err)
		}
	}
	return out, nil
}

// kept is the MARC the row keeps (keptMARC).
func (r recordRow) kept() *marc.Record { return keptMARC(r.bib, r.source) }

// keepsPrevious reports whether a write must first keep the MARC a record
// has (prev, as keptMARC makes it from its row's source) as a version, since
// its latest version (last, lastSource) does not hold it: a record not saved
// since versions were kept, or one last written by a path that keeps none.
func keepsPrevious(last int, lastSource, rowSource, prev string) bool {
	return last == 0 || (lastSource != prev && lastSource != rowSource)
}

// RecordMARC returns the record's MARC as it is kept (for a record typed
// before records kept MARC, as it would be made on its next save).
func RecordMARC(tx *db.Tx, id int64) (*marc.Record, error) {
	r, err := readRecordRow(tx, id)
	if err != nil {
		return nil, err
	}
	return r.kept(), nil
}

// checkMARC refuses a record that cannot be kept: one that does not validate,
// is too long to export as ISO 2709, or has no title (245 $a or $b, or 130, 240, 246) to derive.
func checkMARC(rec *marc.Record) error {
	if err := rec.Validate(); err != nil {
		return stacks.FieldErrorf("marc", stacks.EINVALID, "The record cannot be kept as MARC: %s.", strings.TrimPrefix(err.Error(), "marc: "))
	}
	// Export writes ISO 2709, whose record and field lengths are bounded.
	if err := marc.WriteISO2709(io.Discard, rec); err != nil {
		return stacks.FieldErrorf("marc", stacks.EINVALID, "The record is too long for MARC 21 (ISO 2709): %s. Shorten or split its longest fields.", strings.TrimPrefix(err.Error(), "marc: "))
	}
	if BibOf(rec).Title == "" {
		return stacks.FieldErrorf("marc", stacks.EINVALID, "The record has no title: add a 245 field with $a, such as =245  00$aTitle.")
	}
	return nil
}

// normalMARC checks rec (checkMARC) and returns it in the readers' normal form
// (a leader whose lengths are the record's), as it will be read back: so that
// a save followed by a read changes nothing.
func normalMARC(rec *marc.Record) (*marc.Record, error) {
	if err := checkMARC(rec); err != nil {
		return nil, err
	}
	source, err := marc.ToXML(rec)
	if err != nil {
		return nil, stacks.FieldErrorf("marc", stacks.EINVALID, "The record cannot be kept as MARC: %v.", err)
	}
	out, err := marc.FromXML(source)
	if err != nil {
		return nil, stacks.FieldErrorf("marc", stacks.EINVALID, "The record cannot be kept as MARC: %v.", err)
	}
	return out, nil
}

// replaceMARC replaces record id's MARC with rec and derives its fields from
// it (writeMARC): the one write of an existing record's MARC, for the editor's
// save, a restore, a copy-cataloguing overlay and an import's undo. origin,
// when not "", says where rec came from, for the audit entry.
func replaceMARC(tx *db.Tx, actor stacks.Actor, id int64, rec *marc.Record, action, origin string) error {
	row, err := readRecordRow(tx, id)
	if err != nil {
		return err
	}
	return writeMARC(tx, actor, id, row, rec, action, origin)
}

// writeMARC replaces the MARC of record id, whose row and latest version are
// row, with rec (checked and normalised: normalMARC), derives its fields from
// it, and keeps it as a version (versions are numbered from 1; the MARC the
// record had is kept first when no version holds it: keepsPrevious). The
// save is audited as action, saying which fields of the catalogue and of the
// MARC changed. A save that changes nothing writes nothing but the audit.
func writeMARC(tx *db.Tx, actor stacks.Actor, id int64, row recordRow, rec *marc.Record, action, origin string) error {
	rec, err := normalMARC(rec)
	if err != nil {
		return err
	}
	before := row.kept()
	source, err := marc.ToXML(rec)
	if err != nil {
		return stacks.FieldErrorf("marc", stacks.EINVALID, "The record cannot be kept as MARC: %v.", err)
	}
	prev, err := marc.ToXML(before)
	if err != nil {
		return fmt.Errorf("record %d: keep the previous MARC: %w", id, err)
	}
	from := ""
	if origin != "" {
		from = "from " + origin + "; "
	}
	b := BibOf(rec)
	if prev == source && row.source != "" && sameBib(row.bib, b) {
		return tx.Audit(actor, action, "record", id, from+"no changes")
	}
	now := db.FormatTime(tx.Now())
	_, err = tx.Exec(`UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?, control_number = ?,
		marc = ?, updated_at = ? WHERE id = ?`, b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"),
		b.ControlNumber, source, now, id)
	if err != nil {
		return fmt.Errorf("update record %d: %w", id, err)
	}
	if err := setSystemNumbers(tx, id, uniqueKeys(before), rec); err != nil {
		return err
	}
	last := row.version
	if keepsPrevious(last, row.versionSource, row.source, prev) {
		last++
		if err := insertVersions(tx, id, keptVersion{last, prev, stacks.Actor{}, row.updatedAt}, keptVersion{last + 1, source, actor, now}); err != nil {
			return err
		}
	} else if err := insertVersions(tx, id, keptVersion{last + 1, source, actor, now}); err != nil {
		return err
	}
	old := bibInput(row.bib)
	in := bibInput(b)
	detail := changes([]change{
		{"title", old.Title, in.Title}, {"author", old.Author, in.Author}, {"isbn", old.ISBN, in.ISBN},
		{"publisher", old.Publisher, in.Publisher}, {"year", old.Year, in.Year}, {"subjects", old.Subjects, in.Subjects},
		{"control number", row.bib.ControlNumber, b.ControlNumber},
	})
	if detail == "no changes" {
		detail = "fields unchanged"
	}
	detail += fmt.Sprintf("; MARC version %d: %s", last+1, DiffMARC(before, rec).Summary())
	return tx.Audit(actor, action, "record", id, from+detail)
}

// keptVersion is one version of a record's MARC to keep.
type keptVersion struct {
	number int
	source string
	actor  stacks.Actor
	at     string
}

// insertVersions keeps versions of record id, in one statement.
func insertVersions(tx *db.Tx, id int64, vs ...keptVersion) error {
	q := `INSERT INTO record_versions (record_id, version, marc, staff_id, actor, saved_at) VALUES `
	var args []any
	for i, v := range vs {
		if i > 0 {
			q += ", "
		}
		q += "(?, ?, ?, ?, ?, ?)"
		var staff sql.NullInt64
		if v.actor.StaffID != 0 {
			staff = sql.NullInt64{Int64: v.actor.StaffID, Valid: true}
		}
		args = append(args, id, v.number, v.source, staff, v.actor.Name, v.at)
	}
	if _, err := tx.Exec(q, args...); err != nil {
		return fmt.Errorf("record %d: keep version %d: %w", id, vs[len(vs)-1].number, err)
	}
	return nil
}

// SaveMARC replaces record id's MARC with rec (the MARC editor's save); the
// catalogue's fields are derived from it. Given base, the version the
// cataloguer edited (SaveMARCText), it refuses the save when the record's
// latest version is another: someone saved it meanwhile.
func SaveMARC(tx *db.Tx, actor stacks.Actor, id int64, rec *marc.Record, base ...int) error {
	row, err := readRecordRow(tx, id)
	if err != nil {
		return err
	}
	if len(base) > 0 && row.version != base[0] {
		return stacks.Errorf(stacks.ECONFLICT, "Record %d was saved by someone else while you edited it (version %d). Open the MARC editor again: your changes are below to copy.", id, row.version)
	}
	return writeMARC(tx, actor, id, row, rec, "record.update", "")
}

// CreateRecordMARC adds a record from its MARC (a template, or typed in the
// MARC editor) and returns its id.
func CreateRecordMARC(tx *db.Tx, actor stacks.Actor, rec *marc.Record) (int64, error) {
	return createMARC(tx, actor, rec, "")
}

// createMARC adds a record from rec (checked and normalised: normalMARC),
// its fields derived from it and its MARC kept as version 1, and returns its
// id: the one insert of a record. origin, when not "", says where rec came
// from, for the audit entry.
func createMARC(tx *db.Tx, actor stacks.Actor, rec *marc.Record, origin string) (int64, error) {
	rec, err := normalMARC(rec)
	if err != nil {
		return 0, err
	}
	source, err := marc.ToXML(rec)
	if err != nil {
		return 0, stacks.FieldErrorf("marc", stacks.EINVALID, "The record cannot be kept as MARC: %v.", err)
	}
	b := BibOf(rec)
	now := db.FormatTime(tx.Now())
	var id int64
	err = tx.QueryRow(`INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at)
		VALUES (`+nextRecordID+`, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year),
		strings.Join(b.Subjects, "\n"), b.ControlNumber, source, now, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert record: %w", err)
	}
	if err := setSystemNumbers(tx, id, nil, rec); err != nil {
		return 0, err
	}
	if err := insertVersions(tx, id, keptVersion{1, source, actor, now}); err != nil {
		return 0, err
	}
	detail := fmt.Sprintf("%q by %q", b.Title, b.Author)
	if origin != "" {
		detail += " from " + origin
	}
	if err := tx.Audit(actor, "record.create", "record", id, detail); err != nil {
		return 0, err
	}
	return id, nil
}

// RecordVersion is one saved version of a record's MARC.
type RecordVersion struct {
	Version int
	// Actor is who saved it ("" for the MARC a record had before its first
	// save kept versions).
	Actor   string
	SavedAt string
}

// RecordVersions lists a record's saved versions, newest first.
func RecordVersions(tx *db.Tx, id int64) ([]RecordVersion, error) {
	rows, err := tx.Query(`SELECT version, actor, saved_at FROM record_versions WHERE record_id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("record %d versions: %w", id, err)
	}
	defer rows.Close()
	var out []RecordVersion
	for rows.Next() {
		var v RecordVersion
		if err := rows.Scan(&v.Version, &v.Actor, &v.SavedAt); err != nil {
			return nil, fmt.Errorf("record %d versions: %w", id, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// RecordVersionMARC returns version v of a record's MARC.
func RecordVersionMARC(tx *db.Tx, id int64, v int) (*marc.Record, error) {
	var source string
	err := tx.QueryRow(`SELECT marc FROM record_versions WHERE record_id = ? AND version = ?`, id, v).Scan(&source)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "Record %d has no version %d; choose one from its list of versions.", id, v)
	} else if err != nil {
		return nil, fmt.Errorf("record %d version %d: %w", id, v, err)
	}
	rec, err := marc.FromXML(source)
	if err != nil {
		return nil, fmt.Errorf("record %d version %d: %w", id, v, err)
	}
	return rec, nil
}

// RestoreVersion makes version v of record id its MARC again: a new save (and
// version) of the old MARC, audited as record.restore.
func RestoreVersion(tx *db.Tx, actor stacks.Actor, id int64, v int) error {
	rec, err := RecordVersionMARC(tx, id, v)
	if err != nil {
		return err
	}
	return replaceMARC(tx, actor, id, rec, "record.restore", "")
}
