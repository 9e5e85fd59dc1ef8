// Package reports owns the library's statistics: the standard reports staff run
// (circulation, overdues, the holds queue, new patrons, most borrowed titles, items
// not borrowed since a date, collection size), the SQL reports administrators save
// and run on a read-only connection, stocktakes of a shelf, and the data behind
// spine, barcode and patron-card labels.
//
// Every standard report is one or two SQL statements over the library's own
// tables; the report returns a Result (columns, rows, a headline total and the
// series to draw as a chart) that the web package renders as a table, an SVG chart
// and a CSV file alike.
package reports

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Column is one column of a report's table.
type Column struct {
	Name string
	// Numeric columns are right-aligned and written to CSV as they are.
	Numeric bool
	// ItemBarcodes marks the column of a report that lists items: it holds
	// each row's item barcode, which the report page offers to the batch item
	// edit. A report's own label for a column says nothing of what it holds (a
	// SQL report may name any column "Barcode"), so only this mark does.
	ItemBarcodes bool
}

// Bar is one bar of a report's chart.
type Bar struct {
	Label string
	Value int
}

// Result is a report's output.
type Result struct {
	Columns []Column
	Rows    [][]string
	// Total is the report's headline figure: the loans counted, the items listed,
	// the patrons added. TotalLabel says what it counts.
	Total      int
	TotalLabel string
	// Chart is the series to draw, nil when a chart would not help; ChartTitle
	// says what the bars are.
	Chart      []Bar
	ChartTitle string
	// Truncated: a listing report has more rows than PageRows and the page shows
	// the first of them (the CSV file, asked for with Filter.All, has them all).
	Truncated bool
	// TruncatedNote says, for an SQL report, which cap Truncated reached.
	TruncatedNote string
	// Page and Pages: a paged report's page (from 1) and how many there are, of
	// PageRows rows each; zero for the reports that are not paged. A page past the
	// last (Page > Pages) has no rows: PastEnd says so.
	Page, Pages int
	// RolledUpAt is, for a report that reads the rolled-up statistics, when they
	// were last rolled up: loans issued after it are not counted yet. Zero for the
	// reports that read the live tables.
	RolledUpAt time.Time
}

// PageRows is how many rows a listing report shows on the page; its CSV file has
// every row. A variable so that a test can page the demo library's hundred or so
// overdue loans; set it only before a report runs (it is not guarded).
var PageRows = 500

// Filter holds a report's filters; each report uses some of them.
type Filter struct {
	// From and To are days, To included; zero means open-ended.
	From, To time.Time
	// Since is the day of "not borrowed since".
	Since      time.Time
	BranchID   int64
	ItemTypeID int64
	CategoryID int64
	// GroupBy is how circulation is counted: branch, month, item_type, category.
	GroupBy string
	// Status narrows the holds queue: queued, in_transit, waiting.
	Status string
	// Limit is how many titles "most borrowed" lists.
	Limit int
	// All asks a listing report for every row (the CSV file), not the page's.
	All bool
	// Page is the page of a paged listing report (the overdue items), from 1;
	// 0 is the first.
	Page int
	// Emit, when set with All, takes each row of a report that streams its rows
	// (the overdue items) as it is read, instead of Result.Rows: the CSV file is
	// written as the report runs. Reports that do not stream ignore it.
	Emit func(cols []Column, row []string) error
}

// Filter fields, as form field names.
const (
	FieldFrom     = "from"
	FieldTo       = "to"
	FieldSince    = "since"
	FieldBranch   = "branch"
	FieldItemType = "item_type"
	FieldCategory = "category"
	FieldGroup    = "group"
	FieldStatus   = "status"
	FieldLimit    = "limit"
	FieldPage     = "page"
)

// Definition describes one standard report.
type Definition struct {
	// Slug names the report in its URL: /reports/{slug}.
	Slug        string
	Title       string
	Description string
	// Fields are the filters the report takes, in the order of its form.
	Fields []string
	// Defaults fill the filters on a first visit, given today.
	Defaults func(today time.Time) url.Values
	// Rolled: the report reads the statistics Rollup keeps (migration 0012); run
	// Rollup before it for counts up to the moment.
	Rolled bool
	run    func(tx *db.Tx, f Filter) (Result, error)
}

// PastEnd reports whether the result is a page after the report's last one, as a
// link kept from a longer report or an edited address may ask for.
func (r *Result) PastEnd() bool { return r.Pages > 0 && r.Page > r.Pages }

// Uses reports whether the report takes the filter field.
func (d Definition) Uses(field string) bool {
	for _, f := range d.Fields {
		if f == field {
			return true
		}
	}
	return false
}

// Run runs the report with filter f in tx.
func (d Definition) Run(tx *db.Tx, f Filter) (Result, error) {
	res, err := d.run(tx, f)
	if err == nil && d.Rolled {
		var loans, coll time.Time
		loans, coll, err = RolledUpAt(tx)
		if res.RolledUpAt = loans; d.Slug == "collection" {
			res.RolledUpAt = coll
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("report %s: %w", d.Slug, err)
	}
	return res, nil
}

// GroupOptions are the ways circulation can be counted, value and label.
var GroupOptions = [][2]string{
	{"month", "Month"}, {"branch", "Branch"}, {"item_type", "Item type"}, {"category", "Patron category"},
}

// HoldStatusOptions are the open hold statuses the holds queue can show.
var HoldStatusOptions = [][2]string{
	{"", "All open holds"}, {"queued", "Queued"}, {"in_transit", "In transit"}, {"waiting", "Waiting for pickup"},
}

// yearToDate is the default range of the circulation reports: this year so far.
func yearToDate(today time.Time) url.Values {
	return url.Values{
		FieldFrom: {time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC).Format(db.DayFormat)},
		FieldTo:   {today.Format(db.DayFormat)},
	}
}

// Definitions are the standard reports, in the order of the Reports page.
var Definitions = []Definition{
	{
		Slug: "circulation", Title: "Circulation",
		Description: "Loans issued in a period, counted by month, branch, item type or patron category.",
		Fields:      []string{FieldFrom, FieldTo, FieldGroup, FieldBranch, FieldItemType, FieldCategory},
		Defaults: func(today time.Time) url.Values {
			v := yearToDate(today)
			v.Set(FieldFrom, today.AddDate(-1, 0, 0).Format("2006-01")+"-01")
			v.Set(FieldGroup, "month")
			return v
		},
		Rolled: true,
		run:    circulationReport,
	},
	{
		Slug: "overdue", Title: "Overdue items",
		Description: "Items on loan past their due date, longest overdue first.",
		Fields:      []string{FieldBranch, FieldItemType, FieldCategory},
		Defaults:    func(time.Time) url.Values { return url.Values{} },
		run:         overdueReport,
	},
	{
		Slug: "holds-queue", Title: "Holds queue",
		Description: "Open holds: queued, in transit to their pickup branch, and waiting on the hold shelf.",
		Fields:      []string{FieldBranch, FieldStatus},
		Defaults:    func(time.Time) url.Values { return url.Values{} },
		run:         holdsQueueReport,
	},
	{
		Slug: "new-patrons", Title: "New patrons",
		Description: "Patrons registered in a period, by month and category.",
		Fields:      []string{FieldFrom, FieldTo, FieldBranch, FieldCategory},
		Defaults: func(today time.Time) url.Values {
			v := yearToDate(today)
			v.Set(FieldFrom, today.AddDate(-1, 0, 0).Format("2006-01")+"-01")
			return v
		},
		run: newPatronsReport,
	},
	{
		Slug: "most-borrowed", Title: "Most borrowed titles",
		Description: "The titles with the most loans in a period (the last 30 days at first).",
		Fields:      []string{FieldFrom, FieldTo, FieldBranch, FieldItemType, FieldLimit},
		Defaults: func(today time.Time) url.Values {
			v := yearToDate(today)
			v.Set(FieldFrom, today.AddDate(0, 0, -30).Format(db.DayFormat))
			v.Set(FieldLimit, "20")
			return v
		},
		Rolled: true,
		run:    mostBorrowedReport,
	},
	{
		Slug: "not-borrowed", Title: "Items not borrowed since",
		Description: "Items on the shelf that no one has borrowed since a date (candidates for weeding), oldest last loan first.",
		Fields:      []string{FieldSince, FieldBranch, FieldItemType},
		Defaults: func(today time.Time) url.Values {
			return url.Values{FieldSince: {today.AddDate(-1, 0, 0).Format(db.DayFormat)}}
		},
		Rolled: true,
		run:    notBorrowedReport,
	},
	{
		Slug: "collection", Title: "Collection size",
		Description: "Items by branch and item type, with how many are on loan, lost or missing. Withdrawn items are left out.",
		Fields:      []string{FieldBranch, FieldItemType},
		Defaults:    func(time.Time) url.Values { return url.Values{} },
		Rolled:      true,
		run:         collectionReport,
	},
}

// Find returns the standard report with the slug.
func Find(slug string) (Definition, error) {
	for _, d := range Definitions {
		if d.Slug == slug {
			return d, nil
		}
	}
	return Definition{}, stacks.Errorf(stacks.ENOTFOUND, "There is no report called %q. Choose one on the Reports page.", slug)
}

// ParseFilter reads the report's filters from a form. A value that cannot be read
// is an EINVALID error naming its field and saying what to enter.
func (d Definition) ParseFilter(v url.Values) (Filter, error) {
	var f Filter
	var err error
	day := func(field, label string) (time.Time, error) {
		s := strings.TrimSpace(v.Get(field))
		if s == "" || !d.Uses(field) {
			return time.Time{}, nil
		}
		t, err := time.Parse(db.DayFormat, s)
		if err != nil {
			return time.Time{}, stacks.FieldErrorf(field, stacks.EINVALID, "%s %q is not a date: enter it as YYYY-MM-DD, for example 2026-01-31.", label, s)
		}
		return t, nil
	}
	id := func(field, label string) (int64, error) {
		s := strings.TrimSpace(v.Get(field))
		if s == "" || !d.Uses(field) {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return 0, stacks.FieldErrorf(field, stacks.EINVALID, "Choose a %s from the list.", label)
		}
		return n, nil
	}
	if f.From, err = day(FieldFrom, "From"); err != nil {
		return f, err
	}
	if f.To, err = day(FieldTo, "To"); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return f, stacks.FieldErrorf(FieldTo, stacks.EINVALID, "The period ends (%s) before it starts (%s): swap the dates.", f.To.Format(db.DayFormat), f.From.Format(db.DayFormat))
	}
	if f.Since, err = day(FieldSince, "Since"); err != nil {
		return f, err
	}
	if d.Uses(FieldSince) && f.Since.IsZero() {
		return f, stacks.FieldErrorf(FieldSince, stacks.EINVALID, "Enter the date since which items have not been borrowed (YYYY-MM-DD).")
	}
	if f.BranchID, err = id(FieldBranch, "branch"); err != nil {
		return f, err
	}
	if f.ItemTypeID, err = id(FieldItemType, "item type"); err != nil {
		return f, err
	}
	if f.CategoryID, err = id(FieldCategory, "patron category"); err != nil {
		return f, err
	}
	if d.Uses(FieldGroup) {
		f.GroupBy = v.Get(FieldGroup)
		if f.GroupBy == "" {
			f.GroupBy = "month"
		}
		if !validOption(GroupOptions, f.GroupBy) {
			return f, stacks.FieldErrorf(FieldGroup, stacks.EINVALID, "Count circulation by month, branch, item type or patron category.")
		}
	}
	if d.Uses(FieldStatus) {
		f.Status = v.Get(FieldStatus)
		if !validOption(HoldStatusOptions, f.Status) {
			return f, stacks.FieldErrorf(FieldStatus, stacks.EINVALID, "Choose queued, in transit, waiting, or all open holds.")
		}
	}
	// The page of a paged report: a bad or missing number is the first page.
	if n, err := strconv.Atoi(v.Get(FieldPage)); err == nil && n > 1 {
		f.Page = n
	}
	if d.Uses(FieldLimit) {
		f.Limit = 20
		if s := strings.TrimSpace(v.Get(FieldLimit)); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 1000 {
				return f, stacks.FieldErrorf(FieldLimit, stacks.EINVALID, "Show between 1 and 1000 titles.")
			}
			f.Limit = n
		}
	}
	return f, nil
}

func validOption(opts [][2]string, v string) bool {
	for _, o := range opts {
		if o[0] == v {
			return true
		}
	}
	return false
}

// Choice is an option of a filter's list: a branch, item type or category.
type Choice struct {
	ID   int64
	Name string
}

// Choices are the lists the report forms offer.
type Choices struct {
	Branches, ItemTypes, Categories []Choice
}

// ListChoices reads the branches, item types and patron categories, in one
// statement.
func ListChoices(tx *db.Tx) (Choices, error) {
	rows, err := tx.Query(`SELECT 'b', id, name FROM branches
		UNION ALL SELECT 't', id, name FROM item_types
		UNION ALL SELECT 'c', id, name FROM patron_categories
		ORDER BY 1, 3`)
	if err != nil {
		return Choices{}, fmt.Errorf("report choices: %w", err)
	}
	defer rows.Close()
	var c Choices
	for rows.Next() {
		var kind string
		var ch Choice
		if err := rows.Scan(&kind, &ch.ID, &ch.Name); err != nil {
			return Choices{}, err
		}
		switch kind {
		case "b":
			c.Branches = append(c.Branches, ch)
		case "t":
			c.ItemTypes = append(c.ItemTypes, ch)
		case "c":
			c.Categories = append(c.Categories, ch)
		}
	}
	return c, rows.Err()
}

// where builds a WHERE clause from conditions that apply.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(ok bool, cond string, args ...any) {
	if ok {
		w.conds = append(w.conds, cond)
		w.args = append(w.args, args...)
	}
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// startOf and endOf turn the filter's days into the instants stored in the
// database (UTC): From's midnight, and the midnight after To.
func startOf(day time.Time) string { return db.FormatTime(day) }
func endOf(day time.Time) string   { return db.FormatTime(day.AddDate(0, 0, 1)) }

func itoa(n int) string { return strconv.Itoa(n) }

// badText reports whether s is not valid UTF-8 or holds control characters
// (allowControl lists the ones a multi-line field may hold: tab, newlines).
func badText(s string, allowControl string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool {
		return (r < 0x20 || r == 0x7f) && !strings.ContainsRune(allowControl, r)
	})
}

// and is the WHERE clause with one more condition (that takes no arguments).
func (w *where) and(cond string) string {
	c := where{conds: append(append([]string{}, w.conds...), cond)}
	return c.String()
}
