package catalog

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// SearchQuery is what staff typed, and which page of results they want.
type SearchQuery struct {
	Text    string
	Page    int // 1-based
	PerPage int
}

// Hit is one record in search results, with its availability.
type Hit struct {
	RecordID  int64
	Title     string
	Author    string
	Publisher string
	Year      int
	Copies    int
	Available int
}

// SearchResult is one page of hits.
type SearchResult struct {
	Query SearchQuery
	Total int
	Hits  []Hit
	// BarcodeRecordID is set when the text is an item's barcode: go straight there.
	BarcodeRecordID int64
}

// searchFields maps the field prefixes staff may type to FTS columns.
var searchFields = map[string]string{"title": "title", "author": "author", "subject": "subjects", "isbn": "isbn"}

// MatchExpression turns what staff typed into an FTS5 query: every word must match
// (as a prefix), optionally within a field ("title:left", "author:le guin"). Words
// are quoted, so FTS syntax typed by accident (or malice) is taken literally.
func MatchExpression(text string) (string, error) {
	if !utf8.ValidString(text) || len(text) > 500 {
		return "", stacks.FieldErrorf("q", stacks.EINVALID, "Search for up to 500 characters of words.")
	}
	var parts []string
	field := ""
	for _, tok := range strings.Fields(text) {
		if name, rest, ok := strings.Cut(tok, ":"); ok {
			if col, known := searchFields[strings.ToLower(name)]; known {
				field = col
				tok = rest
			}
		}
		word := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return ' '
		}, tok)
		for _, w := range strings.Fields(word) {
			phrase := `"` + w + `"*`
			if field != "" {
				phrase = field + " : " + phrase
			}
			parts = append(parts, phrase)
		}
	}
	if len(parts) == 0 {
		return "", stacks.FieldErrorf("q", stacks.EINVALID, "Type a word of the title, author or subject, an ISBN, or a barcode.")
	}
	return strings.Join(parts, " AND "), nil
}

// Search finds records by keyword, ranked by relevance (bm25, title weighted most),
// in three queries: the barcode check, the page of hits with its total, and the
// copies and availability of the hits.
func Search(tx *db.Tx, q SearchQuery) (SearchResult, error) {
	if q.PerPage <= 0 || q.PerPage > 100 {
		q.PerPage = 20
	}
	if q.Page <= 0 {
		q.Page = 1
	}
	res := SearchResult{Query: q}
	text := strings.TrimSpace(q.Text)
	if !strings.ContainsAny(text, " \t") && text != "" && len(text) <= 64 {
		err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = ?`, text).Scan(&res.BarcodeRecordID)
		if err == nil {
			return res, nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return res, fmt.Errorf("barcode lookup: %w", err)
		}
	}
	match, err := MatchExpression(text)
	if err != nil {
		return res, err
	}
	// bm25 must be computed in the FTS query itself, hence the subquery.
	rows, err := tx.Query(`SELECT r.id, r.title, r.author, r.publisher, coalesce(r.year, 0), count(*) OVER ()
		FROM (SELECT rowid AS id, bm25(records_fts, 10.0, 4.0, 2.0, 1.0) AS score
			FROM records_fts WHERE records_fts MATCH ?) m
		JOIN records r ON r.id = m.id
		ORDER BY m.score, r.id
		LIMIT ? OFFSET ?`, match, q.PerPage, (q.Page-1)*q.PerPage)
	if err != nil {
		return res, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var ids []any
	index := map[int64]int{}
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.RecordID, &h.Title, &h.Author, &h.Publisher, &h.Year, &res.Total); err != nil {
			return res, err
		}
		index[h.RecordID] = len(res.Hits)
		ids = append(ids, h.RecordID)
		res.Hits = append(res.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	rows.Close()
	if len(ids) == 0 {
		return res, nil
	}
	arows, err := tx.Query(`SELECT record_id, count(*), sum(CASE WHEN status = 'available' THEN 1 ELSE 0 END)
		FROM items WHERE record_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) GROUP BY record_id`, ids...)
	if err != nil {
		return res, fmt.Errorf("availability: %w", err)
	}
	defer arows.Close()
	for arows.Next() {
		var id int64
		var copies, avail int
		if err := arows.Scan(&id, &copies, &avail); err != nil {
			return res, err
		}
		h := &res.Hits[index[id]]
		h.Copies, h.Available = copies, avail
	}
	return res, arows.Err()
}

// Record is a bibliographic record.
type Record struct {
	ID        int64
	Title     string
	Author    string
	ISBN      string
	Publisher string
	Year      int
	Subjects  []string
}

// CopyStatus is an item of a record as the record page lists it.
type CopyStatus struct {
	Item
	BranchName string
	DueAt      db.NullTime
}

// FindRecord returns a record and its items with their status, in two queries.
func FindRecord(tx *db.Tx, id int64) (*Record, []CopyStatus, error) {
	var r Record
	var subjects string
	err := tx.QueryRow(`SELECT id, title, author, isbn, publisher, coalesce(year, 0), subjects FROM records WHERE id = ?`, id).
		Scan(&r.ID, &r.Title, &r.Author, &r.ISBN, &r.Publisher, &r.Year, &subjects)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, stacks.Errorf(stacks.ENOTFOUND, "There is no record %d in the catalogue. Search for it by title or author.", id)
	} else if err != nil {
		return nil, nil, fmt.Errorf("find record %d: %w", id, err)
	}
	for _, s := range strings.Split(subjects, "\n") {
		if s = strings.TrimSpace(s); s != "" {
			r.Subjects = append(r.Subjects, s)
		}
	}
	rows, err := tx.Query(`SELECT `+ItemColumns+`, cb.name, l.due_at`+ItemFrom+`
		JOIN branches cb ON cb.id = i.current_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		WHERE i.record_id = ? ORDER BY hb.name, i.barcode`, id)
	if err != nil {
		return nil, nil, fmt.Errorf("items of record %d: %w", id, err)
	}
	defer rows.Close()
	var items []CopyStatus
	for rows.Next() {
		var c CopyStatus
		if err := rows.Scan(append(c.ItemScanDest(), &c.BranchName, &c.DueAt)...); err != nil {
			return nil, nil, err
		}
		items = append(items, c)
	}
	return &r, items, rows.Err()
}
