package catalog

import (
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks/db"
)

// searchSQL is one engine's search: how the parsed words are bound (the first
// parameter of each statement) and the statements that read the matches. The
// statements that read records and items by id (hits, facets) are the same on
// both engines and stay in search.go.
type searchSQL struct {
	// match renders the words as the statements' first parameter.
	match func([]searchTerm) string
	// count: how many records match 1, counting up to 2 at most.
	count string
	// countBest, if set, replaces count, best and bestOfNewest: rows of
	// (-1, how many records match 1, up to 2), and of (id, place) for the
	// FacetDepth (4) best of the newest RankLimit (3) matches, 1 the best;
	// the matches, newest first, are m, and c holds their count n.
	countBest string
	// best: the FacetDepth (2) best matches of 1, best first, and
	// bestOfNewest the FacetDepth (3) best of the newest RankLimit (2)
	// matches of 1 (SQLite: PostgreSQL's countBest answers both).
	best         string
	bestOfNewest string
	// bounds: the id of the RankLimit-th (2 is RankLimit-1) and of the
	// ListLimit-th (3) newest match of 1, or 0 for the second when there are
	// fewer.
	bounds string
	// relevance lists the matches of 1 from id 3 up with their place in
	// relevance order (ORDER BY part, score, id): the ranked core (ids from 2
	// up) first, best first, then the rest, newest first.
	relevance string
	// relevancePage is one page (4 records from offset 5) of relevance.
	relevancePage string
	// newest lists the matches of 1 from id 3 up (2 is unused), for the title
	// and year orders.
	newest string
	// titleOrder orders records r by title, ignoring case.
	titleOrder string
	// walk lists one page (2 records from offset 3) of all the matches of 1
	// by "title" (titleOrder) or "year" (newest first), walking the order's
	// index (migration 0021) and keeping the matches: for a broad match,
	// which the walk meets every few records, so that a page costs about
	// reading the matches once, not joining them to records and sorting.
	walk map[string]string
	// countIDs: a filter's count of the matches that pass reads the copies of
	// the matches' ids kept under the catalogue's version (searchCache) rather
	// than the matches again. On PostgreSQL, where each match is a read of its
	// row, it halves "history" on the shelf; on SQLite binding thousands of
	// ids cost three times what FTS5's read of the matches does. idParams must
	// then be a table of one column.
	countIDs bool
	// param is the nth numbered parameter.
	param func(n int) string
	// idList writes ids as what IN (...) takes, with its arguments, for the
	// facets' FacetDepth ids.
	idList func(ids []int64) (string, []any)
	// idParams is idList for a statement of numbered parameters: param adds
	// each argument and returns its placeholder.
	idParams func(ids []int64, param func(any) string) string
	// settings, if set, is a column of the search's first statement (the
	// barcode's and the catalogue version's): on PostgreSQL postgresPlanning,
	// so that its settings hold for every statement after it, whether the
	// search's matches are kept or read.
	settings string
}

// searchSQLOf returns the search statements of tx's engine.
func searchSQLOf(tx *db.Tx) *searchSQL {
	if tx.Engine() == db.Postgres {
		return &postgresSearch
	}
	return &sqliteSearch
}

// sqliteSearch: FTS5's records_fts, ranked by the table's rank (bm25 with the
// title weighted most: migrations/0003_search.sql), which FTS5 can order by and
// stop at the page's end.
var sqliteSearch = searchSQL{
	match: fts5Expression,
	count: `SELECT count(*) FROM (SELECT 1 FROM records_fts WHERE records_fts MATCH ? LIMIT ?)`,
	best:  `SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rank, rowid LIMIT ?`,
	bestOfNewest: `SELECT id FROM (SELECT rowid AS id, rank AS score FROM records_fts WHERE records_fts MATCH ? ORDER BY rowid DESC LIMIT ?)
			ORDER BY score, id LIMIT ?`,
	bounds: `SELECT (SELECT rowid FROM records_fts WHERE records_fts MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2),
				coalesce((SELECT rowid FROM records_fts WHERE records_fts MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?3), 0)`,
	relevance:     relevanceOrder,
	relevancePage: `SELECT id FROM (` + relevanceOrder + `) ORDER BY part, score, id LIMIT ?4 OFFSET ?5`,
	newest:        `SELECT rowid AS id FROM records_fts WHERE records_fts MATCH ?1 AND rowid >= ?3`,
	titleOrder:    "r.title COLLATE NOCASE, r.id",
	// INDEXED BY: SQLite would otherwise join each match to records by its
	// id and sort them all. The matches are read once into a set (the IN
	// list), which each record of the walk is looked up in; a look-up of one
	// record in records_fts (MATCH and rowid =) reads the word's whole list
	// again, about 3 ms for "fiction".
	walk: map[string]string{
		"title": `SELECT r.id FROM records r INDEXED BY records_title WHERE r.id IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?1)
			ORDER BY r.title COLLATE NOCASE, r.id LIMIT ?2 OFFSET ?3`,
		"year": `SELECT r.id FROM records r INDEXED BY records_year WHERE r.id IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?1)
			ORDER BY coalesce(r.year, 0) DESC, r.id DESC LIMIT ?2 OFFSET ?3`,
	},
	param:  func(n int) string { return "?" + strconv.Itoa(n) },
	idList: idArgs,
	idParams: func(ids []int64, param func(any) string) string {
		if len(ids) == 0 {
			return "NULL"
		}
		ps := make([]string, len(ids))
		for i, id := range ids {
			ps[i] = param(id)
		}
		return strings.Join(ps, ", ")
	},
}

// relevanceOrder is sqliteSearch's relevance. The rank column is only computed
// for the core.
const relevanceOrder = `SELECT rowid AS id, 0 AS part, rank AS score FROM records_fts WHERE records_fts MATCH ?1 AND rowid >= ?2 AND rowid >= ?3
	UNION ALL
	SELECT rowid, 1, -rowid FROM records_fts WHERE records_fts MATCH ?1 AND rowid < ?2 AND rowid >= ?3`

// postgresSearch: records_fts is a table of weighted tsvectors (doc, for
// ranking) and of the same words tagged with their fields (words, for matching)
// with a GIN index on words (migrations/postgres/0017_baseline.sql and
// 0019_search_fields.sql). The typed words are a tsquery read by to_tsquery with
// the stacks_english configuration (unaccent, English stemming), so each word
// is normalised as the documents' words were; records_fts_query writes its
// words restricted to a field as tagged words, which the index answers without
// reading a row again ("Recheck Cond").
//
// Ranking is ts_rank with the weights of tsRankWeights, FTS5's bm25 weights in
// the same ratios, normalised by the log of the record's length (as bm25
// favours shorter fields). ts_rank and not ts_rank_cd: bm25 scores how often
// each word occurs, not how close the words are. Unlike bm25, ts_rank knows
// nothing of how rare a word is in the catalogue, so among records that have
// every word, one with a common word twice can rank above one with a rare word
// twice where bm25 would not; the matches, totals, facets, the ranked core and
// the newest-first order past it are the same.
var postgresSearch = searchSQL{
	match: tsQueryText,
	// The statement that reads a search's matches. It is planned for its
	// words each time (countBest passes db.PlanEach), so that the planner
	// sees the words' tsquery and the statistics of how many records have
	// them, with the settings of postgresPlanning, which the search's first
	// statement made (settings). It makes them too, in a scalar subquery
	// that runs once at its start, for a search without that statement (not
	// a barcode, nothing kept: a write transaction's), for the statements
	// after it.
	//
	// It reads the ids of the newest matches, up to the count's limit: they
	// are the count, and the newest RankLimit of them are ranked, their
	// vectors read again by id (a look-up a match, in a scalar subquery,
	// whatever joins the planner allows), whether or not more than ListLimit
	// match
	// (bestOfNewest is not needed). For a word in half the catalogue
	// ("subject:fiction", 44,581 of 100,000 records) the planner walks the
	// primary key backwards and stops at the limit's match, after about
	// 24,000 rows; for a rarer word it reads the matches through the index
	// and sorts their ids.
	//
	// Whole searches of "subject:fiction" at 100,000 titles, their matches
	// not kept, side by side in one run (medians, ms): 25.1 when this
	// statement was planned once for any words (the tsquery read from the
	// subquery: the planner always took the index, whose bitmap holds all
	// 44,581 matches before the first row is read); 13.5 planned for the
	// words but keeping the matches' vectors (copying 10,001 vectors costs
	// more than reading 1,000 again by id); 12.5 as here. A search of a few
	// hundred matches pays about 1 ms for the second read of their vectors.
	countBest: `WITH m AS MATERIALIZED (SELECT id FROM records_fts WHERE words @@ records_fts_query($1) AND (SELECT true FROM (` + postgresPlanning + `) s)
			ORDER BY id DESC LIMIT $2),
		c AS MATERIALIZED (SELECT count(*) AS n FROM m)
		SELECT -1::bigint, n FROM c
		UNION ALL
		SELECT id, row_number() OVER (ORDER BY score DESC, id) FROM (
			SELECT b.id, ` + tsRankOf("(SELECT r.doc FROM records_fts r WHERE r.id = b.id)") + ` AS score
			FROM (SELECT id FROM m ORDER BY id DESC LIMIT $3) b, to_tsquery('stacks_english', $1) q
			ORDER BY score DESC, b.id LIMIT $4) t`,
	// Both bounds in one read of the newest matches, backwards by the primary
	// key (not one read each).
	bounds: `SELECT min(id) FILTER (WHERE n = $2::bigint + 1), coalesce(min(id) FILTER (WHERE n = $3::bigint + 1), 0)
		FROM (SELECT id, row_number() OVER (ORDER BY id DESC) AS n FROM records_fts WHERE words @@ records_fts_query($1)
			ORDER BY id DESC LIMIT $3::bigint + 1) b`,
	relevance:     postgresRelevance,
	relevancePage: `SELECT id FROM (` + postgresRelevance + `) o ORDER BY part, score, id LIMIT $4 OFFSET $5`,
	// PostgreSQL must know every parameter's type, $2 too.
	newest:     `SELECT id FROM records_fts WHERE words @@ records_fts_query($1) AND id >= $3 AND $2::bigint IS NOT NULL`,
	titleOrder: `lower(r.title) COLLATE "C", r.id`,
	// The planner walks the index (records_title, records_year) and looks
	// each record up in records_fts by its id, which stops at the page's end.
	walk: map[string]string{
		"title": `SELECT r.id FROM records r WHERE r.id IN (SELECT id FROM records_fts WHERE words @@ records_fts_query($1))
			ORDER BY lower(r.title) COLLATE "C", r.id LIMIT $2 OFFSET $3`,
		"year": `SELECT r.id FROM records r WHERE r.id IN (SELECT id FROM records_fts WHERE words @@ records_fts_query($1))
			ORDER BY coalesce(r.year, 0) DESC, r.id DESC LIMIT $2 OFFSET $3`,
	},
	countIDs: true,
	settings: `(SELECT true FROM (` + postgresPlanning + `) s)`,
	param:    func(n int) string { return "$" + strconv.Itoa(n) },
	// One array, not FacetDepth parameters: one prepared statement for any
	// number of ids, where a list would be a statement for each length, and
	// planning a list of 500 values cost as much as running the facets'
	// statement.
	idList: func(ids []int64) (string, []any) { return `SELECT unnest(CAST(? AS bigint[]))`, []any{ids} },
	idParams: func(ids []int64, param func(any) string) string {
		return `SELECT unnest(CAST(` + param(ids) + ` AS bigint[]))`
	},
}

// withSettings adds the planner's settings (settings: postgresPlanning on
// PostgreSQL) to the search's first statement, query, with a destination for
// their column after dest: the search's planner settings are made there, or,
// for a search without that statement, by countBest, and nowhere else.
func (sq *searchSQL) withSettings(query string, dest []any) (string, []any) {
	if sq.settings == "" {
		return query, dest
	}
	return query + `, ` + sq.settings, append(dest, new(bool))
}

// postgresPlanning sets, for the search's transaction only, what its statements
// need from the planner (the search's first statement runs it, without a round
// trip of its own: postgresSearch.settings, and countBest for a search that
// has no such statement):
//   - nested loops over the indexes for every join: each joins at most
//     ListLimit matches to records or items by id, and with hash or merge joins
//     allowed the planner read the whole records table (100,000 rows, four
//     times slower for subject:fiction by year);
//   - no JIT compilation and no parallel workers, whose start costs more than
//     such a statement.
//
// Every statement that reads the matches of the words is planned for its words
// (db.PlanEach, passed by search and its helpers): a plan made once for any
// words (PostgreSQL's generic plan for a prepared statement, which it chooses
// after five runs) assumes a few hundred matches for every search, which is
// slow for one that has one match or 45,000, and computes records_fts_query
// for every row it checks. The statements that read records and copies by id
// (the facets, the page's records) keep their prepared plans: planning them at
// every search as well (plan_cache_mode = force_custom_plan for the
// transaction) would cost a search with its matches kept 0.4 ms at the median
// (2.9 against 3.3 ms, warm, side by side).
const postgresPlanning = `SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
		set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`

// tsRankWeights are ts_rank's weights for D, C, B and A (isbn, subjects, author,
// title): bm25's 1, 2, 4 and 10 on SQLite, in the same ratios.
const tsRankWeights = `'{0.1, 0.2, 0.4, 1.0}'::float4[]`

// tsRank scores record doc for query q, higher for better (bm25 is lower for
// better: the statements negate it where both are ordered the same way).
var tsRank = tsRankOf("doc")

// tsRankOf is tsRank of the vector doc.
func tsRankOf(doc string) string { return `ts_rank(` + tsRankWeights + `, ` + doc + `, q, 1)` }

// postgresRelevance is postgresSearch's relevance: the score is negated
// ts_rank in the core, as SQLite's bm25 rank is lower for better.
var postgresRelevance = `SELECT id, 0 AS part, -` + tsRank + `::float8 AS score
		FROM records_fts, to_tsquery('stacks_english', $1) q WHERE words @@ records_fts_query($1) AND id >= $2 AND id >= $3
	UNION ALL
	SELECT id, 1, -id::float8 FROM records_fts WHERE words @@ records_fts_query($1) AND id < $2 AND id >= $3`

// tsWeights restrict a word typed with a field to the field's weight in
// records_fts.doc.
var tsWeights = map[string]string{"title": "A", "author": "B", "subjects": "C", "isbn": "D"}

// tsQueryText writes the words as to_tsquery's input: each word quoted (a
// quote or backslash in it escaped, though parseSearch keeps only letters and
// digits), :* for a prefix, the field's weight, all joined by &. to_tsquery
// then removes diacritics from and stems each word, as it did the records'.
func tsQueryText(terms []searchTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('\'')
		for _, r := range t.word {
			if r == '\'' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('\'')
		label := tsWeights[t.field]
		if t.prefix {
			label = "*" + label
		}
		if label != "" {
			b.WriteString(":" + label)
		}
	}
	return b.String()
}
