package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// SearchQuery is what staff typed, the filters chosen from the facets, the order,
// and which page of results they want.
type SearchQuery struct {
	Text string
	// Sort is "relevance" (the default), "title" or "year" (newest first).
	Sort string
	// ItemType and Branch are codes; records with at least one such copy match.
	ItemType string
	Branch   string
	// Available keeps records with a copy on the shelf (of the type, at the branch).
	Available bool
	Page      int // 1-based
	PerPage   int
	// NoBarcode: the text is never an item's barcode (patrons do not search by
	// barcode), which saves the look-up.
	NoBarcode bool
	// ByBranch reads the page's availability by branch (SearchResult.Availability)
	// in the statement that reads its records, for the patrons' catalogue.
	ByBranch bool
}

// Values are the query as the search forms' parameters (q, sort, type, branch,
// available, page), each left out where it has its default: the links of a
// results page that keep every other choice.
func (q SearchQuery) Values() url.Values {
	vals := url.Values{"q": {q.Text}}
	if q.Sort != "" && q.Sort != "relevance" {
		vals.Set("sort", q.Sort)
	}
	if q.ItemType != "" {
		vals.Set("type", q.ItemType)
	}
	if q.Branch != "" {
		vals.Set("branch", q.Branch)
	}
	if q.Available {
		vals.Set("available", "1")
	}
	if q.Page > 1 {
		vals.Set("page", strconv.Itoa(q.Page))
	}
	return vals
}

// Facet is one value to narrow results by, with how many matching records have it.
type Facet struct {
	Code  string
	Name  string
	Count int
}

// Facets count the records matching the words, by item type, by branch, and with a
// copy available (before any filter is applied, so each count says what choosing it
// would leave).
type Facets struct {
	ItemTypes []Facet
	Branches  []Facet
	Available int
	// Partial: more records matched than the facets count (FacetDepth).
	Partial bool
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
	Query  SearchQuery
	Total  int
	Hits   []Hit
	Facets Facets
	// BarcodeRecordID is set when the text is an item's barcode: go straight there.
	BarcodeRecordID int64
	// RankedOnly: more records matched than RankLimit, so relevance ranks the
	// newest RankLimit of them and the rest follow, newest first.
	RankedOnly bool
	// Limited: more records matched than ListLimit and the search is filtered,
	// so only the newest ListLimit were; Total counts those that passed. (Sorted
	// by title or year without a filter, a search lists from all the matches.)
	Limited bool
	// Availability is each hit's availability by branch, with ByBranch.
	Availability map[int64][]BranchAvailability
	// TotalOver: more than ListLimit records match the words, and Total is
	// ListLimit. A search counts its matches up to ListLimit only, as
	// Elasticsearch's track_total_hits does (its 10,000+): no page past
	// ListLimit can be listed anyway, and counting the rest of a broad match
	// ("subject:fiction", 45 % of a large catalogue) cost more than the rest of
	// the search on PostgreSQL. Not set for a filtered search, whose Total is
	// exact among the newest ListLimit (Limited).
	TotalOver bool
}

// ErrSearchTooLong is what a search that ran out of time returns (its
// transaction's context passed its deadline): the engine was interrupted, and
// staff are told how to narrow the search.
var ErrSearchTooLong = stacks.FieldErrorf("q", stacks.EINVALID,
	"The search took too long: narrow it with another word, a field such as title: or author:, or fewer words ending in *.")

// searchFields maps the field prefixes staff may type to FTS columns.
var searchFields = map[string]string{"title": "title", "author": "author", "subject": "subjects", "isbn": "isbn"}

// stopwords are left out of a search unless nothing else is typed: they are in
// nearly every title, so requiring them costs much and narrows nothing.
var stopwords = map[string]bool{"a": true, "an": true, "and": true, "at": true, "by": true, "for": true,
	"from": true, "in": true, "of": true, "on": true, "or": true, "the": true, "to": true, "with": true}

// The search budget: what one search may ask of the engine. A word
// typed with a trailing * matches every indexed word that starts with it, and FTS5
// reads and merges all their lists; "s*" alone matches half a large catalogue, and
// 166 of them took 51 s at 100,000 titles. Each limit comes with a message that
// says what to change.
const (
	// MaxSearchWords is how many words a search may require (common words left
	// out, repeated words counted once).
	MaxSearchWords = 8
	// MaxPrefixWords is how many words may match as prefixes (typed with a
	// trailing *, or the last word, which matches as a prefix while the budget
	// allows).
	MaxPrefixWords = 3
	// MinPrefixLen is how many letters or digits a word typed with a trailing *
	// needs.
	MinPrefixLen = 3
)

// searchTerm is one word of a search: the FTS column it is restricted to
// (searchFields' values, or "" for any), the word as typed, and whether it
// matches as a prefix.
type searchTerm struct {
	field, word string
	prefix      bool
}

// MatchExpression turns what staff typed into an FTS5 query: every word must match,
// optionally within a field ("title:left", "author:le guin"). The last word, if it
// has three letters or more, and any word typed with a trailing * match as prefixes
// (so a half-typed word finds). Words are quoted, so FTS syntax typed by accident
// (or malice) is taken literally. A search over the budget (MaxSearchWords,
// MaxPrefixWords, MinPrefixLen) is refused with a message saying what to change.
// PostgreSQL's search takes the same words (parseSearch) as a tsquery instead
// (tsQueryText).
func MatchExpression(text string) (string, error) {
	terms, err := parseSearch(text)
	if err != nil {
		return "", err
	}
	return fts5Expression(terms), nil
}

// parseSearch reads what staff typed into the words every match must have (see
// MatchExpression), refusing a search over the budget.
func parseSearch(text string) ([]searchTerm, error) {
	if !utf8.ValidString(text) || len(text) > 500 {
		return nil, stacks.FieldErrorf("q", stacks.EINVALID, "Search for up to 500 characters of words.")
	}
	terms, prefixes, err := searchWords(text)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, stacks.FieldErrorf("q", stacks.EINVALID, "Type a word of the title, author or subject, an ISBN, or a barcode.")
	}
	if prefixes > MaxPrefixWords {
		return nil, stacks.FieldErrorf("q", stacks.EINVALID,
			"Use * on at most %d words: each one reads every word that starts with it.", MaxPrefixWords)
	}
	if last := &terms[len(terms)-1]; !last.prefix && prefixes < MaxPrefixWords && utf8.RuneCountInString(last.word) >= 3 {
		last.prefix = true
	}
	kept := terms[:0:0]
	for _, t := range terms {
		if t.field == "" && !t.prefix && stopwords[strings.ToLower(t.word)] {
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		kept = terms
	}
	if len(kept) > MaxSearchWords {
		return nil, stacks.FieldErrorf("q", stacks.EINVALID,
			"Use at most %d words (common words such as “the” and “of” are not counted): keep the most telling ones.", MaxSearchWords)
	}
	return kept, nil
}

// searchWords splits what staff typed into words, each with its field and
// whether it matches as a prefix (typed with a trailing *), leaving out
// repeated words, and counts the prefixes.
func searchWords(text string) (terms []searchTerm, prefixes int, err error) {
	seen := map[searchTerm]bool{}
	field := ""
	for _, tok := range strings.Fields(text) {
		if name, rest, ok := strings.Cut(tok, ":"); ok {
			if col, known := searchFields[strings.ToLower(name)]; known {
				field = col
				tok = rest
			}
		}
		star := strings.HasSuffix(tok, "*")
		words := strings.Fields(strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return ' '
		}, tok))
		for i, w := range words {
			t := searchTerm{field: field, word: w, prefix: star && i == len(words)-1}
			if t.prefix && utf8.RuneCountInString(w) < MinPrefixLen {
				return nil, 0, stacks.FieldErrorf("q", stacks.EINVALID,
					"A word ending in * needs at least %d letters: type more of “%s*”, or leave out the *.", MinPrefixLen, w)
			}
			// A repeated word narrows nothing and costs a full read each time.
			key := searchTerm{field: field, word: strings.ToLower(w), prefix: t.prefix}
			if seen[key] {
				continue
			}
			seen[key] = true
			if t.prefix {
				prefixes++
			}
			terms = append(terms, t)
		}
	}
	return terms, prefixes, nil
}

// fts5Expression writes the words as an FTS5 query, each quoted.
func fts5Expression(terms []searchTerm) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + t.word + `"`
		if t.prefix {
			parts[i] += "*"
		}
		if t.field != "" {
			parts[i] = t.field + " : " + parts[i]
		}
	}
	return strings.Join(parts, " AND ")
}

// Search finds records by keyword, ranked by relevance (bm25, title weighted most;
// past RankLimit matches, among the newest RankLimit). Ranked and unfiltered (the
// common case), it runs five statements at most: the barcode check, the total, the
// best FacetDepth matches in rank order, the facets over those best matches, and
// the page's records with their copies and availability (on PostgreSQL the
// total and the best are one statement, countBest). Filtered in relevance
// order, a page among the best that pass comes from them (filteredBest); other
// pages and the other orders take a general query over all matches instead,
// except a broad match (past ListLimit) sorted by title or year without a
// filter, which walks the order's index (searchSQL.walk).
//
// Its work is bounded: the words by MatchExpression's budget, ranking by
// RankLimit, counting, sorting, filtering and paging by ListLimit, and time by the
// transaction's context: past its deadline SQLite is interrupted (PostgreSQL's
// statement cancelled) and Search returns ErrSearchTooLong.
//
// The statements that read the matches are per engine (searchSQL): FTS5 on
// SQLite, a tsvector with a GIN index on PostgreSQL.
func Search(tx *db.Tx, q SearchQuery) (SearchResult, error) {
	res, err := search(tx, q)
	if err != nil && errors.Is(tx.Context().Err(), context.DeadlineExceeded) {
		return SearchResult{Query: res.Query}, ErrSearchTooLong
	}
	return res, err
}

// Check refuses a search over the budget (the words, the page) before it takes
// a connection: the same message Search would give, at no cost.
func (q SearchQuery) Check() error {
	q = q.withDefaults()
	if q.Page > ListLimit/q.PerPage {
		return errPastListLimit
	}
	_, err := MatchExpression(strings.TrimSpace(q.Text))
	return err
}

var errPastListLimit = stacks.FieldErrorf("q", stacks.EINVALID,
	"Only the first %d results can be listed: add a word to narrow the search.", ListLimit)

// search runs a search as named steps: the query's defaults, the first
// statement (barcode, catalogue version, planner settings), the words, what
// they match (kept or read: the count and the best in rank order), the
// facets, the page's ids, and the page's records.
func search(tx *db.Tx, q SearchQuery) (SearchResult, error) {
	q = q.withDefaults()
	res := SearchResult{Query: q}
	if q.Page > ListLimit/q.PerPage {
		return res, errPastListLimit
	}
	text := strings.TrimSpace(q.Text)
	sq, cache := searchSQLOf(tx), searchCacheOf(tx)
	version, barcodeRecord, err := firstStatement(tx, sq, cache, q, text)
	if err != nil || barcodeRecord != 0 {
		res.BarcodeRecordID = barcodeRecord
		return res, err
	}
	terms, err := parseSearch(text)
	if err != nil {
		return res, err
	}
	s := &searchRun{tx: tx, sq: sq, q: q, match: sq.match(terms), passed: -1}
	if err := s.readMatches(cache, version); err != nil {
		return res, fmt.Errorf("search: %w", err)
	}
	// Past ListLimit, res.Total says ListLimit and s.n, which the bounds
	// compare, ListLimit + 1.
	res.Total, res.TotalOver = min(s.n, ListLimit), s.n > ListLimit
	if s.n == 0 {
		return res, nil
	}
	res.RankedOnly = s.n > RankLimit
	if err := s.facets(&res); err != nil {
		return res, err
	}
	page, err := s.page(&res)
	if err != nil {
		return res, err
	}
	return res, res.readHits(tx, page)
}

// withDefaults fills in what the query left out: 20 a page, the first
// page, in relevance order.
func (q SearchQuery) withDefaults() SearchQuery {
	if q.PerPage <= 0 || q.PerPage > 100 {
		q.PerPage = 20
	}
	if q.Page <= 0 {
		q.Page = 1
	}
	switch q.Sort {
	case "title", "year":
	default:
		q.Sort = "relevance"
	}
	return q
}

// firstStatement runs the search's first statement, when it has one: the text
// looked up as an item's barcode, the catalogue's version, under which what
// the words match is kept (searchCache), and the planner's settings
// (searchSQL.withSettings). What depends on the copies is read afterwards.
// It returns the version, and the record of the barcode's item if the text is
// one.
func firstStatement(tx *db.Tx, sq *searchSQL, cache *searchCache, q SearchQuery, text string) (version, recordID int64, err error) {
	// A barcode is valid UTF-8 without NUL (which PostgreSQL refuses in text,
	// where SQLite would look it up and not find it).
	barcode := !q.NoBarcode && !strings.ContainsAny(text, " \t\x00") && text != "" && len(text) <= 64 && utf8.ValidString(text)
	if !barcode && cache == nil {
		return 0, 0, nil
	}
	record, current, args := "NULL", "0", []any{}
	if barcode {
		record, args = `(SELECT record_id FROM items WHERE barcode = ?)`, append(args, text)
	}
	if cache != nil {
		current, args = `coalesce((SELECT version FROM cache_versions WHERE name = ?), 0)`, append(args, CacheCatalogue)
	}
	var id sql.NullInt64
	query, dest := sq.withSettings(`SELECT `+record+`, `+current, []any{&id, &version})
	if err := tx.QueryRow(query, args...).Scan(dest...); err != nil {
		return 0, 0, fmt.Errorf("barcode lookup: %w", err)
	}
	return version, id.Int64, nil
}

// searchRun is one search's state between its steps.
type searchRun struct {
	tx    *db.Tx
	sq    *searchSQL
	q     SearchQuery
	match string // the words, as the engine's match expression
	// kept holds what the words match, read or reused (searchCache): n, how
	// many (up to ListLimit + 1), and best, the best FacetDepth in rank order.
	kept *matches
	n    int
	best []int64
	// passed counts the matches that pass the filters, when countBest
	// counted them; -1 otherwise. pass says which of best pass, when the
	// facets' read was asked to (facets).
	passed int
	pass   map[int64]bool
	// cut and floor are where the ranked core and the newest ListLimit
	// matches end (bounds).
	cut, floor int64
}

// filters reports whether the query narrows by a copy's type, branch or
// availability.
func (s *searchRun) filters() bool { return s.q.ItemType != "" || s.q.Branch != "" || s.q.Available }

// every reports whether best holds every match.
func (s *searchRun) every() bool { return len(s.best) >= s.n }

func (s *searchRun) offset() int { return (s.q.Page - 1) * s.q.PerPage }

// readMatches reuses what the words match if kept under version, or else
// counts the matches and ranks the best, and keeps them.
func (s *searchRun) readMatches(cache *searchCache, version int64) error {
	if s.kept = cache.get(version, s.match); s.kept != nil {
		s.n, s.best = s.kept.n, s.kept.best
	} else if err := s.count(); err != nil {
		return err
	}
	if s.n > 0 && s.best == nil {
		if err := s.rank(); err != nil {
			return err
		}
	}
	if s.kept == nil {
		s.kept = &matches{n: s.n, best: s.best}
		cache.put(version, s.match, s.kept)
	}
	return nil
}

// count counts the matches, stopping at ListLimit + 1 (TotalOver). On
// PostgreSQL one statement counts and ranks (searchSQL.countBest).
func (s *searchRun) count() (err error) {
	if s.sq.countBest != "" {
		s.n, s.best, s.passed, err = countBest(s.tx, s.sq, s.match, s.q)
		return err
	}
	return s.tx.QueryRow(s.sq.count, s.match, ListLimit+1).Scan(&s.n)
}

// rank reads the best FacetDepth matches in rank order (bm25 on SQLite,
// ts_rank on PostgreSQL, each with the fields' weights): among all the
// matches, or past RankLimit among the newest RankLimit, read newest first
// without scoring, then scored.
func (s *searchRun) rank() (err error) {
	if s.n <= RankLimit {
		s.best, err = s.tx.IDs(s.sq.best, s.match, FacetDepth)
	} else {
		s.best, err = s.tx.IDs(s.sq.bestOfNewest, s.match, RankLimit, FacetDepth)
	}
	return err
}

// facets counts the best matches by item type, branch and availability.
// Filtered in relevance order with the count of the matches that pass known
// (countBest's, or best is every match), which of the best pass is all
// filteredBest needs: the facets' read of the best's copies says so.
func (s *searchRun) facets(res *SearchResult) (err error) {
	passFilter := s.filters() && s.q.Sort == "relevance" && (s.passed >= 0 || s.every())
	if res.Facets, s.pass, err = facetsOf(s.tx, s.best, s.q, passFilter); err != nil {
		return err
	}
	res.Facets.Partial = s.n > len(s.best)
	return nil
}

// page returns the ids of the page's records, setting res.Total and
// res.Limited where the page's read counts them.
func (s *searchRun) page(res *SearchResult) ([]int64, error) {
	filtered := s.filters() || s.q.Sort != "relevance"
	switch {
	case !filtered && (s.offset()+s.q.PerPage <= len(s.best) || len(s.best) < FacetDepth):
		return window(s.best, s.offset(), s.q.PerPage), nil
	case !s.filters() && s.q.Sort != "relevance" && s.n > ListLimit:
		return s.walkPage()
	case filtered:
		return s.filteredList(res)
	}
	// Past the best in relevance order: list from all the matches.
	if err := s.bounds(true); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	page, err := s.tx.IDs(s.sq.relevancePage, db.PlanEach, s.match, s.cut, s.floor, s.q.PerPage, s.offset())
	if err != nil {
		return nil, fmt.Errorf("search page: %w", err)
	}
	return page, nil
}

// window is the part of ids from offset, at most n.
func window(ids []int64, offset, n int) []int64 {
	return ids[min(offset, len(ids)):min(offset+n, len(ids))]
}

// walkPage reads a page of a broad match sorted by title or year: it walks
// the order's index (records_title, records_year) and keeps the matches,
// which stops at the page's end, over all the matches, not the newest
// ListLimit joined to their records and sorted.
func (s *searchRun) walkPage() ([]int64, error) {
	key := pageKey{s.q.Sort, s.offset(), s.q.PerPage}
	if page, ok := s.kept.page(key); ok {
		return page, nil
	}
	page, err := s.tx.IDs(s.sq.walk[s.q.Sort], db.PlanEach, s.match, s.q.PerPage, s.offset())
	if err != nil {
		return nil, fmt.Errorf("search page: %w", err)
	}
	s.kept.setPage(key, page)
	return page, nil
}

// bounds reads where the ranked core ends (cut, see searchSQL.relevance), for
// the relevance order, and, past ListLimit, where the newest ListLimit end
// (the floor): sorting, filtering and paging consider those only. Both come
// from one statement, read only when a statement needs them: below RankLimit
// both are 0; a filtered page among the best needs the floor only, which is 0
// below ListLimit.
func (s *searchRun) bounds(relevance bool) error {
	if (relevance && s.n > RankLimit) || s.n > ListLimit {
		return s.tx.QueryRow(s.sq.bounds, db.PlanEach, s.match, RankLimit-1, ListLimit-1).Scan(&s.cut, &s.floor)
	}
	return nil
}

// filteredList reads a page of a filtered search, or of one sorted by title
// or year: from the best that pass when the page is among them, else from all
// the matches in the order; an unfiltered page is kept with the matches.
func (s *searchRun) filteredList(res *SearchResult) ([]int64, error) {
	res.Limited = s.n > ListLimit
	// A filter counts exactly what it lists (Limited says among what).
	res.TotalOver = res.TotalOver && !s.filters()
	if err := s.bounds(false); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if s.filters() && s.q.Sort == "relevance" {
		page, done, err := s.passingBest(res)
		if err != nil || done {
			return page, err
		}
		if err := s.bounds(true); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	var page []int64
	var listed int
	var err error
	key := pageKey{s.q.Sort, s.offset(), s.q.PerPage}
	if cached, ok := s.kept.page(key); ok && !s.filters() {
		page, listed = cached, -1
	} else if page, listed, err = filteredPage(s.tx, s.sq, s.match, s.cut, s.floor, s.q); err == nil && !s.filters() {
		s.kept.setPage(key, page)
	}
	switch {
	case listed >= 0:
		res.Total = listed
	case s.floor != 0:
		// The newest ListLimit matches, all of them listed.
		res.Total = ListLimit
	}
	if err != nil {
		return nil, fmt.Errorf("search page: %w", err)
	}
	return page, nil
}

// passingBest is a filtered search in relevance order: the best that pass, in
// their order, begin the whole order. A page among them, or all of them when
// the best are every match, needs no more (done). Unless counted already, the
// count of those that pass reads every match again: on PostgreSQL from the
// ids kept (searchSQL.countIDs).
func (s *searchRun) passingBest(res *SearchResult) (page []int64, done bool, err error) {
	every := s.every()
	var all []int64
	if s.sq.countIDs && s.passed < 0 && !every && s.n <= ListLimit {
		if all = s.kept.allIDs(); all == nil {
			if all, err = s.tx.IDs(`SELECT id FROM (`+s.sq.newest+`) m`, db.PlanEach, s.match, 0, 0); err != nil {
				return nil, false, fmt.Errorf("search: %w", err)
			}
			s.kept.setAll(all)
		}
	}
	passing, count, err := filteredBest(s.tx, s.sq, s.match, s.floor, s.best, every, s.passed, all, s.pass, s.q)
	if err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	if s.offset()+s.q.PerPage <= len(passing) || every {
		res.Total = count
		return window(passing, s.offset(), s.q.PerPage), true, nil
	}
	return nil, false, nil
}

// countBest runs sq.countBest: how many records match (up to ListLimit + 1)
// and the best FacetDepth of the newest RankLimit in rank order. Filtered
// in relevance order, it also counts the matches that pass the filters in the
// same read of the matches (what filteredBest would count again), unless more
// than ListLimit match; -1 when it did not.
func countBest(tx *db.Tx, sq *searchSQL, match string, q SearchQuery) (int, []int64, int, error) {
	query, args := sq.countBest, []any{match, ListLimit + 1, RankLimit, FacetDepth}
	param := func(v any) string {
		args = append(args, v)
		return sq.param(len(args))
	}
	if conds := itemFilter(q, param); conds != "" && q.Sort == "relevance" {
		query += `
		UNION ALL
		SELECT -2, count(*) FROM m WHERE (SELECT n FROM c) < $2 AND EXISTS (SELECT 1 FROM items i WHERE i.record_id = m.id AND ` + conds + `)`
	} else {
		args = args[:4]
	}
	rows, err := tx.Query(query, append([]any{db.PlanEach}, args...)...)
	if err != nil {
		return 0, nil, -1, err
	}
	defer rows.Close()
	n, passed := 0, -1
	var ranked [][2]int64
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return 0, nil, -1, err
		}
		switch {
		case id == -1:
			n = int(v)
		case id == -2:
			passed = int(v)
		default:
			ranked = append(ranked, [2]int64{v, id})
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, -1, err
	}
	if n > ListLimit {
		passed = -1
	}
	if len(ranked) == 0 {
		return n, nil, passed, nil
	}
	slices.SortFunc(ranked, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	best := make([]int64, len(ranked))
	for i, r := range ranked {
		best[i] = r[1]
	}
	return n, best, passed, nil
}

// readHits reads the page's records with their availability: by branch too
// when the query asks.
func (res *SearchResult) readHits(tx *db.Tx, ids []int64) error {
	var err error
	if res.Query.ByBranch {
		res.Hits, res.Availability, err = hitsByBranch(tx, ids)
	} else {
		res.Hits, err = hitsFor(tx, ids)
	}
	return err
}

func idArgs(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "?" + strings.Repeat(", ?", len(ids)-1), args
}

// filteredPage returns one page of the matches that have a copy passing the filters,
// in the chosen order, and how many there are. cut is where the ranked core ends
// and floor where the newest ListLimit matches end (see searchSQL.relevance).
func filteredPage(tx *db.Tx, sq *searchSQL, match string, cut, floor int64, q SearchQuery) ([]int64, int, error) {
	args := []any{match, cut, floor}
	param := func(v any) string {
		args = append(args, v)
		return sq.param(len(args))
	}
	filter := ""
	if conds := itemFilter(q, param); conds != "" {
		filter = "WHERE EXISTS (SELECT 1 FROM items i WHERE i.record_id = m.id AND " + conds + ")"
	}
	// Relevance needs the rank (for the ranked core only); the other orders do not.
	matches := sq.relevance
	order := "m.part, m.score, r.id"
	switch q.Sort {
	case "title":
		matches = sq.newest
		order = sq.titleOrder
	case "year":
		matches = sq.newest
		order = "coalesce(r.year, 0) DESC, r.id DESC"
	}
	// Sorted without a filter, every match from floor up is listed: their
	// number is known, and the engine need not count them (a count over all
	// rows keeps it from sorting only the first offset + limit).
	counted := "count(*) OVER ()"
	if filter == "" {
		counted = "-1"
	}
	limit, offset := param(q.PerPage), param((q.Page-1)*q.PerPage)
	rows, err := tx.Query(`WITH m AS MATERIALIZED (`+matches+`)
		SELECT r.id, `+counted+`
		FROM m JOIN records r ON r.id = m.id `+filter+`
		ORDER BY `+order+`
		LIMIT `+limit+` OFFSET `+offset, append([]any{db.PlanEach}, args...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var ids []int64
	total := 0
	if filter == "" {
		total = -1
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id, &total); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, total, rows.Err()
}

// itemFilter is the condition a copy i passes for q's filters (item type,
// branch, on the shelf), with param adding each value as a parameter; "" when q
// has none.
//
// The unary + keeps the engine from reading the copies by type or branch (an
// index on home_branch_id holds a branch's tens of thousands): every statement
// that uses the condition reads the copies of given records, by record_id.
func itemFilter(q SearchQuery, param func(any) string) string {
	var conds []string
	if q.ItemType != "" {
		conds = append(conds, "+i.item_type_id = (SELECT id FROM item_types WHERE code = "+param(q.ItemType)+")")
	}
	if q.Branch != "" {
		conds = append(conds, "+i.home_branch_id = (SELECT id FROM branches WHERE code = "+param(q.Branch)+")")
	}
	if q.Available {
		conds = append(conds, "i.status = 'available'")
	}
	return strings.Join(conds, " AND ")
}

// filteredBest counts the matches from floor up that have a copy passing q's
// filters, without ranking them, and returns those of best (the best matches, in
// relevance order) that pass, in their order, in one statement; all says best
// holds every match, which the count then need not read again. The relevance
// order of the matches that pass starts with them: a page among them needs
// nothing more, and if best holds every match they are all there is. passed,
// unless -1, is the count already (countBest's).
//
// ids, if not nil, are every match (ListLimit or fewer): the count reads
// their copies, not the matches again. pass, if not nil, says which of best
// pass (facetsOf read it); then, with the count known, there is no statement.
func filteredBest(tx *db.Tx, sq *searchSQL, match string, floor int64, best []int64, all bool, passed int, ids []int64, pass map[int64]bool, q SearchQuery) ([]int64, int, error) {
	// When best holds every match, those of best that pass are the count,
	// and the statement reads best only (and has no match parameters, which
	// PostgreSQL must be able to type); so it does when the count is known.
	// sq.newest's second parameter is unused.
	counted := all || passed >= 0
	if counted && pass != nil {
		return passingOf(best, pass, all, passed)
	}
	args := []any{match, 0, floor}
	if counted || ids != nil {
		args = nil
	}
	param := func(v any) string {
		args = append(args, v)
		return sq.param(len(args))
	}
	conds := itemFilter(q, param)
	in := sq.idParams(best, param)
	count := `SELECT 0, count(*) FROM (` + sq.newest + `) m WHERE EXISTS (SELECT 1 FROM items i WHERE i.record_id = m.id AND ` + conds + `)
		UNION ALL
		`
	switch {
	case counted:
		count = ""
	case ids != nil:
		count = `SELECT 0, count(*) FROM (` + sq.idParams(ids, param) + `) m (id) WHERE EXISTS (SELECT 1 FROM items i WHERE i.record_id = m.id AND ` + conds + `)
		UNION ALL
		`
	}
	if count != "" && ids == nil {
		args = append([]any{db.PlanEach}, args...) // the matches of the words
	}
	rows, err := tx.Query(count+`SELECT DISTINCT 1, i.record_id FROM items i WHERE i.record_id IN (`+in+`) AND `+conds, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	total := 0
	pass = map[int64]bool{}
	for rows.Next() {
		var kind, n int64
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, 0, err
		}
		if kind == 0 {
			total = int(n)
		} else {
			pass[n] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if !counted {
		passed = total
	}
	return passingOf(best, pass, all, passed)
}

// passingOf returns those of best that pass, in their order, and the count of
// all the matches that pass: those when best is all, else passed.
func passingOf(best []int64, pass map[int64]bool, all bool, passed int) ([]int64, int, error) {
	var passing []int64
	for _, id := range best {
		if pass[id] {
			passing = append(passing, id)
		}
	}
	if all {
		passed = len(passing)
	}
	return passing, passed, nil
}

// hitsFor reads the records of a page, with their copies and availability, in one
// query, keeping the page's order.
func hitsFor(tx *db.Tx, ids []int64) ([]Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := idArgs(ids)
	rows, err := tx.Query(`SELECT r.id, r.title, r.author, r.publisher, coalesce(r.year, 0),
			count(i.id), coalesce(sum(CASE WHEN i.status = 'available' THEN 1 ELSE 0 END), 0)
		FROM records r LEFT JOIN items i ON i.record_id = r.id
		WHERE r.id IN (`+in+`) GROUP BY r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("search hits: %w", err)
	}
	defer rows.Close()
	byID := map[int64]Hit{}
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.RecordID, &h.Title, &h.Author, &h.Publisher, &h.Year, &h.Copies, &h.Available); err != nil {
			return nil, err
		}
		byID[h.RecordID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(ids))
	for _, id := range ids {
		if h, ok := byID[id]; ok {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// FacetDepth is how many of the best matches the facets count, as Koha's
// maxRecordsForFacets does: exact for smaller result sets, and what a person
// narrowing a large one needs, at a bounded cost.
const FacetDepth = 500

// RankLimit bounds relevance ranking, as Evergreen's core_limit does: bm25 has to
// score every match before the best is known, so a query matching tens of
// thousands of records ("subject:fiction", 45 % of a large catalogue) would cost
// tens of milliseconds. Only the newest RankLimit matches are ranked; any older
// matches follow them, newest first. Below the limit the order is plain relevance.
// It is 1,000, Evergreen's "superpage" of ranked hits: at 5,000 ranking a word
// in 5 % of a 100,000-title catalogue ("history", 4,693 matches) cost about
// 8 ms of a search's 20 on PostgreSQL; the staff page says when it applies
// (RankedOnly), and so does the patrons' catalogue.
const RankLimit = 1000

// ListLimit bounds what a search sorts, filters and pages through: a query
// matching tens of thousands of records, sorted by title or filtered to the
// copies on the shelf, cost over a second at 100,000 titles ("subject:fiction",
// available only: 1.4 s), and page 200 of it 0.3 s. Past ListLimit matches, the
// filters apply to the newest ListLimit (the page says so), and no page starts
// past ListLimit results; the title and year orders without a filter list all
// the matches, walking the order's index (searchSQL.walk). The relevance order lists
// the newest records first past RankLimit anyway, so its first ListLimit
// results are the same either way.
const ListLimit = 10000

// facetsOf counts the records ids by item type, branch and availability, in one
// query. Each count is of the distinct pairs (record, type) or (record,
// branch), found once, not of count(DISTINCT) per group, which sorts each
// group's copies: for 500 records of 1,500 copies (100,000 titles, medians of
// 100 side by side, with the transaction) 3.6 ms on PostgreSQL with
// count(DISTINCT) and 3.2 ms so; on SQLite 2.3 and 1.5 ms.
//
// With passFilter, it also says which of ids have a copy that passes q's
// filters (itemFilter), from the same read of their copies.
func facetsOf(tx *db.Tx, ids []int64, q SearchQuery, passFilter bool) (Facets, map[int64]bool, error) {
	var f Facets
	if len(ids) == 0 {
		return f, nil, nil
	}
	in, args := searchSQLOf(tx).idList(ids)
	passing := ""
	if passFilter {
		conds := itemFilter(q, func(v any) string {
			args = append(args, v)
			return "?"
		})
		passing = `
		UNION ALL
		SELECT DISTINCT 'pass', '', '', i.record_id, 0 FROM c i WHERE ` + conds
	}
	rows, err := tx.Query(`WITH c AS MATERIALIZED (SELECT record_id, item_type_id, home_branch_id, status FROM items WHERE record_id IN (`+in+`))
		SELECT 'type', t.code, t.name, x.n, t.id FROM (SELECT item_type_id, count(*) AS n FROM (SELECT DISTINCT record_id, item_type_id FROM c) d GROUP BY item_type_id) x
			JOIN item_types t ON t.id = x.item_type_id
		UNION ALL
		SELECT 'branch', b.code, b.name, x.n, b.id FROM (SELECT home_branch_id, count(*) AS n FROM (SELECT DISTINCT record_id, home_branch_id FROM c) d GROUP BY home_branch_id) x
			JOIN branches b ON b.id = x.home_branch_id
		UNION ALL
		SELECT 'available', '', '', count(*), 0 FROM (SELECT DISTINCT record_id FROM c WHERE status = 'available') d`+passing+`
		ORDER BY 1, 5`, args...)
	if err != nil {
		return Facets{}, nil, fmt.Errorf("search facets: %w", err)
	}
	defer rows.Close()
	var pass map[int64]bool
	if passFilter {
		pass = map[int64]bool{}
	}
	for rows.Next() {
		var kind string
		var fc Facet
		var id int64 // the order: by type's and branch's id, as they were made
		if err := rows.Scan(&kind, &fc.Code, &fc.Name, &fc.Count, &id); err != nil {
			return Facets{}, nil, err
		}
		switch kind {
		case "pass": // the fourth column is the record's id
			pass[int64(fc.Count)] = true
		case "type":
			f.ItemTypes = append(f.ItemTypes, fc)
		case "branch":
			f.Branches = append(f.Branches, fc)
		case "available":
			f.Available = fc.Count
		}
	}
	return f, pass, rows.Err()
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
	// MARC is the source record as MARCXML, if the record was imported.
	MARC string
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
	err := tx.QueryRow(`SELECT id, title, author, isbn, publisher, coalesce(year, 0), subjects, marc FROM records WHERE id = ?`, id).
		Scan(&r.ID, &r.Title, &r.Author, &r.ISBN, &r.Publisher, &r.Year, &subjects, &r.MARC)
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
