package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// circulationReport counts the loans issued in the period (at the branch that
// issued them), grouped by month, branch, item type or patron category. It adds
// up loan_stats, the daily counts Rollup keeps off the desk's write path
// (migration 0012), not the loans themselves: a year of a large library's loans is a few
// thousand rows there. Days are UTC days, as loans are stored.
func circulationReport(tx *db.Tx, f Filter) (Result, error) {
	var w where
	w.add(!f.From.IsZero(), "s.day >= ?", dayKey(f.From))
	w.add(!f.To.IsZero(), "s.day <= ?", dayKey(f.To))
	w.add(f.BranchID != 0, "s.branch_id = ?", f.BranchID)
	w.add(f.ItemTypeID != 0, "s.item_type_id = ?", f.ItemTypeID)
	w.add(f.CategoryID != 0, "s.category_id = ?", f.CategoryID)
	var q, label string
	switch f.GroupBy {
	case "branch":
		label = "Branch"
		q = `SELECT b.name, n FROM (SELECT s.branch_id AS k, sum(s.loans) AS n FROM loan_stats s` + w.String() +
			` GROUP BY s.branch_id) AS g JOIN branches b ON b.id = k ORDER BY b.name`
	case "item_type":
		label = "Item type"
		q = `SELECT t.name, n FROM (SELECT s.item_type_id AS k, sum(s.loans) AS n FROM loan_stats s` + w.String() +
			` GROUP BY s.item_type_id) AS g JOIN item_types t ON t.id = k ORDER BY t.name`
	case "category":
		label = "Patron category"
		// Category 0: loans rolled up with no category (an anonymised loan
		// without its category: see LoanCategory).
		q = `SELECT coalesce(c.name, 'Unknown'), n FROM (SELECT s.category_id AS k, sum(s.loans) AS n FROM loan_stats s` + w.String() +
			` GROUP BY s.category_id) AS g LEFT JOIN patron_categories c ON c.id = k ORDER BY c.name IS NULL, c.name`
	default:
		label = "Month"
		// The day is the number YYYYMMDD: its month is its first six digits.
		q = `SELECT substr(CAST(min(s.day) AS TEXT), 1, 4) || '-' || substr(CAST(min(s.day) AS TEXT), 5, 2), sum(s.loans) FROM loan_stats s` + w.String() +
			` GROUP BY s.day / 100 ORDER BY s.day / 100`
	}
	res := Result{Columns: []Column{{Name: label}, {Name: "Loans", Numeric: true}}, TotalLabel: "loans", ChartTitle: "Loans by " + lower(label)}
	err := groupRows(tx, q, w.args, &res)
	return res, err
}

// groupRows reads (label, count) rows into res: its rows, its chart and its total.
func groupRows(tx *db.Tx, q string, args []any, res *Result) error {
	rows, err := tx.Query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var label string
		var n int
		if err := rows.Scan(&label, &n); err != nil {
			return err
		}
		res.Rows = append(res.Rows, []string{label, itoa(n)})
		res.Chart = append(res.Chart, Bar{Label: label, Value: n})
		res.Total += n
	}
	return rows.Err()
}

// overdueReport lists the current loans past their due date, of items belonging to
// the branch, longest overdue first: the count and the chart over every one, the
// rows for the page (Filter.Page, PageRows a page), or every row for the CSV file
// (Filter.All), passed to Filter.Emit as they are read when it is set.
//
// The overdue loans are found through open_loans (migration 0012: the loans not
// known to be returned, by due date, kept by the rollup), each checked against
// loans itself, and through the loans not rolled up yet: a few thousand rows at
// 100,000 titles, where reading every current loan (there is no index of current
// loans by due date: every checkout and checkin would write it) read 35,000. Then
// the details of the rows to show only.
func overdueReport(tx *db.Tx, f Filter) (Result, error) {
	now := db.FormatTime(tx.Now())
	var w where
	w.add(true, "l.returned_at IS NULL AND l.due_at < ?", now)
	w.add(f.BranchID != 0, "i.home_branch_id = ?", f.BranchID)
	w.add(f.ItemTypeID != 0, "i.item_type_id = ?", f.ItemTypeID)
	w.add(f.CategoryID != 0, LoanCategory+" = ?", f.CategoryID)
	join := ` JOIN items i ON i.id = l.item_id`
	if f.CategoryID != 0 {
		join += loanPatronJoin
	}
	res := Result{
		Columns: []Column{{Name: "Due"}, {Name: "Days overdue", Numeric: true}, {Name: "Barcode", ItemBarcodes: true}, {Name: "Title"},
			{Name: "Call number"}, {Name: "Branch"}, {Name: "Card"}, {Name: "Patron"}, {Name: "Email"}},
		TotalLabel: "overdue items", ChartTitle: "Overdue items by days overdue",
		Chart: []Bar{{Label: "1-7 days"}, {Label: "8-14 days"}, {Label: "15-30 days"}, {Label: "31-90 days"}, {Label: "over 90 days"}},
	}
	// Days overdue: a loan due yesterday evening is 1 day overdue this morning.
	days := db.Pick(tx, `(CAST(julianday(?) - julianday(l.due_at) AS INTEGER) + 1)`,
		`(CAST(floor(extract(epoch FROM CAST(CAST(? AS TEXT) AS timestamptz) - CAST(l.due_at AS timestamptz)) / 86400) AS INTEGER) + 1)`)
	if f.All {
		return overdueAll(tx, f, w, days, now, res)
	}
	q := `SELECT id, d FROM (
		SELECT l.id, ` + days + ` AS d, l.due_at AS due, i.barcode AS bc FROM open_loans o JOIN loans l ON l.id = o.loan_id` + join +
		w.and("o.due_at < ?") + `
		UNION ALL
		SELECT l.id, ` + days + `, l.due_at, i.barcode FROM loans l` + join +
		w.and("l.id > (SELECT last_loan_id FROM report_rollup WHERE id = 1)") + `) AS overdue
		ORDER BY due, bc, id`
	args := append([]any{now}, w.args...)
	args = append(args, now)
	args = append(args, now)
	args = append(args, w.args...)
	ids, err := tx.Query(q, args...)
	if err != nil {
		return Result{}, err
	}
	first, last := 0, PageRows
	if f.Page > 1 {
		first = (f.Page - 1) * PageRows
		last = first + PageRows
	}
	var show []int64
	for ids.Next() {
		var id int64
		var d int
		if err := ids.Scan(&id, &d); err != nil {
			ids.Close()
			return Result{}, err
		}
		overdueBar(&res, d)
		if res.Total >= first && res.Total < last {
			show = append(show, id)
		}
		res.Total++
	}
	ids.Close()
	if err := ids.Err(); err != nil {
		return Result{}, err
	}
	res.Truncated = res.Total > PageRows
	res.Page, res.Pages = max(f.Page, 1), max((res.Total+PageRows-1)/PageRows, 1)
	if len(show) == 0 {
		return res, nil
	}
	err = overdueDetails(tx, now, days, show, &res)
	return res, err
}

// overdueBar counts a loan d days overdue in the report's chart.
func overdueBar(res *Result, d int) {
	switch {
	case d <= 7:
		res.Chart[0].Value++
	case d <= 14:
		res.Chart[1].Value++
	case d <= 30:
		res.Chart[2].Value++
	case d <= 90:
		res.Chart[3].Value++
	default:
		res.Chart[4].Value++
	}
}

// overdueAll is the overdue report with every row (the CSV file): the loans and
// their details in one pass, each row to f.Emit as it is read when it is set.
func overdueAll(tx *db.Tx, f Filter, w where, days, now string, res Result) (Result, error) {
	cols := `substr(l.due_at, 1, 10) AS due10, ` + days + ` AS d, i.barcode AS bc, r.title, i.call_number, b.name,
		coalesce(p.card, '') AS c7, coalesce(trim(p.first_name || ' ' || p.surname), 'Anonymised') AS c8, coalesce(p.email, '') AS c9,
		l.due_at AS due, l.id AS id`
	join := ` JOIN items i ON i.id = l.item_id` + loanPatronJoin + `
		JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id`
	q := `SELECT due10, d, bc, title, call_number, name, c7, c8, c9 FROM (
		SELECT ` + cols + ` FROM open_loans o JOIN loans l ON l.id = o.loan_id` + join + w.and("o.due_at < ?") + `
		UNION ALL
		SELECT ` + cols + ` FROM loans l` + join + w.and("l.id > (SELECT last_loan_id FROM report_rollup WHERE id = 1)") + `) AS overdue
		ORDER BY due, bc, id`
	args := append([]any{now}, w.args...)
	args = append(args, now, now)
	args = append(args, w.args...)
	rows, err := tx.Query(q, args...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var due, barcode, title, call, branch, card, name, email string
		var d int
		if err := rows.Scan(&due, &d, &barcode, &title, &call, &branch, &card, &name, &email); err != nil {
			return Result{}, err
		}
		overdueBar(&res, d)
		res.Total++
		row := []string{due, itoa(d), barcode, title, call, branch, card, name, email}
		if f.Emit != nil {
			if err := f.Emit(res.Columns, row); err != nil {
				return Result{}, err
			}
			continue
		}
		res.Rows = append(res.Rows, row)
	}
	return res, rows.Err()
}

// overdueDetails reads the table rows of the page's loans ids into res.
func overdueDetails(tx *db.Tx, now, days string, ids []int64, res *Result) error {
	list := make([]string, len(ids))
	for k, id := range ids {
		list[k] = strconv.FormatInt(id, 10)
	}
	rows, err := tx.Query(`SELECT substr(l.due_at, 1, 10), `+days+`, i.barcode, r.title, i.call_number, b.name, coalesce(p.card, ''),
			coalesce(trim(p.first_name || ' ' || p.surname), 'Anonymised'), coalesce(p.email, '')
		FROM loans l JOIN items i ON i.id = l.item_id`+loanPatronJoin+`
		JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id
		WHERE l.id IN (`+db.Pick(tx, `SELECT value FROM json_each(?)`, `SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(? AS json))`)+`)
		ORDER BY l.due_at, i.barcode, l.id`, now, "["+strings.Join(list, ",")+"]")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var due, barcode, title, call, branch, card, name, email string
		var d int
		if err := rows.Scan(&due, &d, &barcode, &title, &call, &branch, &card, &name, &email); err != nil {
			return err
		}
		res.Rows = append(res.Rows, []string{due, itoa(d), barcode, title, call, branch, card, name, email})
	}
	return rows.Err()
}

// holdsQueueReport lists the open holds by pickup branch, status and title.
func holdsQueueReport(tx *db.Tx, f Filter) (Result, error) {
	var w where
	w.add(f.Status == "", "h.status IN ('queued', 'in_transit', 'waiting')")
	w.add(f.Status != "", "h.status = ?", f.Status)
	w.add(f.BranchID != 0, "h.pickup_branch_id = ?", f.BranchID)
	rows, err := tx.Query(`SELECT b.name, h.status, r.title, h.priority, p.card,
			trim(p.first_name || ' ' || p.surname), h.placed_at, coalesce(h.pickup_by, ''), coalesce(ti.barcode, '')
		FROM holds h JOIN records r ON r.id = h.record_id JOIN patrons p ON p.id = h.patron_id
		JOIN branches b ON b.id = h.pickup_branch_id LEFT JOIN items ti ON ti.id = h.trapped_item_id`+w.String()+`
		ORDER BY b.name, CASE h.status WHEN 'waiting' THEN 0 WHEN 'in_transit' THEN 1 ELSE 2 END, r.title, h.priority`, w.args...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res := Result{
		Columns: []Column{{Name: "Pickup branch"}, {Name: "Status"}, {Name: "Title"}, {Name: "Position", Numeric: true},
			{Name: "Card"}, {Name: "Patron"}, {Name: "Placed"}, {Name: "Pick up by"}, {Name: "Item"}},
		TotalLabel: "open holds", ChartTitle: "Open holds by pickup branch",
	}
	perBranch := map[string]int{}
	var order []string
	for rows.Next() {
		var branch, status, title, card, name, placed, pickupBy, item string
		var prio int
		if err := rows.Scan(&branch, &status, &title, &prio, &card, &name, &placed, &pickupBy, &item); err != nil {
			return Result{}, err
		}
		if _, ok := perBranch[branch]; !ok {
			order = append(order, branch)
		}
		perBranch[branch]++
		res.Total++
		pos := ""
		if prio > 0 {
			pos = itoa(prio)
		}
		if f.All || len(res.Rows) < PageRows {
			res.Rows = append(res.Rows, []string{branch, holdStatus(status), title, pos, card, name, day(placed), day(pickupBy), item})
		}
	}
	for _, b := range order {
		res.Chart = append(res.Chart, Bar{Label: b, Value: perBranch[b]})
	}
	res.Truncated = len(res.Rows) < res.Total
	return res, rows.Err()
}

func holdStatus(s string) string {
	for _, o := range HoldStatusOptions {
		if o[0] == s {
			return o[1]
		}
	}
	return s
}

// day is the date part of a stored instant, "" for none.
func day(stored string) string {
	if len(stored) >= 10 {
		return stored[:10]
	}
	return stored
}

// newPatronsReport counts the patrons registered in the period by month and
// category; the chart shows the months.
func newPatronsReport(tx *db.Tx, f Filter) (Result, error) {
	var w where
	w.add(!f.From.IsZero(), "p.created_at >= ?", startOf(f.From))
	w.add(!f.To.IsZero(), "p.created_at < ?", endOf(f.To))
	w.add(f.BranchID != 0, "p.home_branch_id = ?", f.BranchID)
	w.add(f.CategoryID != 0, "p.category_id = ?", f.CategoryID)
	rows, err := tx.Query(`SELECT substr(p.created_at, 1, 7), c.name, count(*)
		FROM patrons p JOIN patron_categories c ON c.id = p.category_id`+w.String()+`
		GROUP BY 1, c.id ORDER BY 1, 2`, w.args...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res := Result{
		Columns:    []Column{{Name: "Month"}, {Name: "Category"}, {Name: "New patrons", Numeric: true}},
		TotalLabel: "new patrons", ChartTitle: "New patrons by month",
	}
	for rows.Next() {
		var month, cat string
		var n int
		if err := rows.Scan(&month, &cat, &n); err != nil {
			return Result{}, err
		}
		res.Rows = append(res.Rows, []string{month, cat, itoa(n)})
		if k := len(res.Chart); k > 0 && res.Chart[k-1].Label == month {
			res.Chart[k-1].Value += n
		} else {
			res.Chart = append(res.Chart, Bar{Label: month, Value: n})
		}
		res.Total += n
	}
	return res, rows.Err()
}

// countByTitle reports whether "most borrowed" is cheaper counted title by title
// through loan_titles_record (every loan ever rolled up read once, in title
// order, no sort) than from the period's loans in time order (fewer loans, but
// sorted by title: about six times the cost a loan, measured at 100,000
// titles). It estimates the period's loans from the ids of its first and last
// loan (ids grow with time) against every loan rolled up: two index seeks.
func countByTitle(tx *db.Tx, f Filter) (bool, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.From.IsZero() {
		lo = f.From.Unix()
	}
	if !f.To.IsZero() {
		hi = f.To.AddDate(0, 0, 1).Unix()
	}
	var first, last, all int64
	err := tx.QueryRow(`SELECT
			coalesce((SELECT loan_id FROM loan_titles WHERE issued >= ?1 AND issued < ?2 ORDER BY issued, loan_id LIMIT 1), 0),
			coalesce((SELECT loan_id FROM loan_titles WHERE issued >= ?1 AND issued < ?2 ORDER BY issued DESC, loan_id DESC LIMIT 1), 0),
			(SELECT last_loan_id FROM report_rollup WHERE id = 1)`, lo, hi).Scan(&first, &last, &all)
	if err != nil {
		return false, err
	}
	return (last-first)*6 > all, nil
}

// mostBorrowedReport lists the titles with the most loans issued in the period,
// from loan_titles (each loan's title and time, kept by Rollup: migration 0012).
func mostBorrowedReport(tx *db.Tx, f Filter) (Result, error) {
	var w where
	w.add(!f.From.IsZero(), "l.issued >= ?", f.From.Unix())
	w.add(!f.To.IsZero(), "l.issued < ?", f.To.AddDate(0, 0, 1).Unix())
	w.add(f.BranchID != 0, "l.branch_id = ?", f.BranchID)
	w.add(f.ItemTypeID != 0, "l.item_type_id = ?", f.ItemTypeID)
	limit := f.Limit
	if limit <= 0 {
		limit = 20
	}
	from := ` FROM loan_titles l`
	byTitle, err := countByTitle(tx, f)
	if err != nil {
		return Result{}, err
	}
	if byTitle {
		// SQLite's planner needs the hint; PostgreSQL's chooses for itself.
		from = db.Pick(tx, ` FROM loan_titles l INDEXED BY loan_titles_record`, from)
	}
	rows, err := tx.Query(`SELECT r.title, r.author, n FROM (
			SELECT l.record_id AS rid, count(*) AS n`+from+w.String()+`
			GROUP BY l.record_id ORDER BY n DESC, l.record_id LIMIT ?) AS top
		JOIN records r ON r.id = rid ORDER BY n DESC, r.id`, append(w.args, limit)...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res := Result{
		Columns:    []Column{{Name: "Rank", Numeric: true}, {Name: "Title"}, {Name: "Author"}, {Name: "Loans", Numeric: true}},
		TotalLabel: "loans of these titles", ChartTitle: "Loans of the most borrowed titles",
	}
	for rows.Next() {
		var title, author string
		var n int
		if err := rows.Scan(&title, &author, &n); err != nil {
			return Result{}, err
		}
		res.Rows = append(res.Rows, []string{itoa(len(res.Rows) + 1), title, author, itoa(n)})
		res.Chart = append(res.Chart, Bar{Label: title, Value: n})
		res.Total += n
	}
	return res, rows.Err()
}

// notBorrowedReport lists the items (neither withdrawn nor lost) with no loan
// issued since the day, in the order they were added; the chart counts them by
// the year of their last loan. It reads items.last_borrowed_at, which Rollup
// keeps (migration 0012), through its index; the status is read from each
// matching item (the index leaves it out: the desk changes it).
func notBorrowedReport(tx *db.Tx, f Filter) (Result, error) {
	var w where
	w.add(true, "(i.last_borrowed_at IS NULL OR i.last_borrowed_at < ?)", startOf(f.Since))
	w.add(true, "i.status NOT IN ('withdrawn', 'lost')")
	w.add(f.BranchID != 0, "i.home_branch_id = ?", f.BranchID)
	w.add(f.ItemTypeID != 0, "i.item_type_id = ?", f.ItemTypeID)
	res := Result{
		Columns: []Column{{Name: "Barcode", ItemBarcodes: true}, {Name: "Title"}, {Name: "Call number"}, {Name: "Branch"},
			{Name: "Item type"}, {Name: "Added"}, {Name: "Last borrowed"}},
		TotalLabel: "items not borrowed since " + f.Since.Format(db.DayFormat), ChartTitle: "Items by the year of their last loan",
	}
	// The totals per year of last loan, over every matching item: every item in
	// the index (which has no status: the desk changes it) less the withdrawn and
	// lost ones, counted through the partial index items_gone. Then the page's rows
	// (or all rows, for the CSV file).
	var kw where
	kw.add(true, "(i.last_borrowed_at IS NULL OR i.last_borrowed_at < ?)", startOf(f.Since))
	kw.add(f.BranchID != 0, "i.home_branch_id = ?", f.BranchID)
	kw.add(f.ItemTypeID != 0, "i.item_type_id = ?", f.ItemTypeID)
	year := `coalesce(substr(i.last_borrowed_at, 1, 4), 'Never')`
	// SQLite's planner needs the index hints; PostgreSQL's chooses for itself.
	byLast := db.Pick(tx, ` INDEXED BY items_last_borrowed`, ``)
	byGone := db.Pick(tx, ` INDEXED BY items_gone`, ``)
	chart, err := tx.Query(`SELECT y, sum(n) FROM (
			SELECT `+year+` AS y, count(*) AS n FROM items i`+byLast+kw.String()+` GROUP BY 1
			UNION ALL
			SELECT `+year+`, -count(*) FROM items i`+byGone+kw.and("i.status IN ('lost', 'missing', 'withdrawn') AND i.status <> 'missing'")+` GROUP BY 1) AS years
		GROUP BY y HAVING sum(n) > 0 ORDER BY y = 'Never' DESC, y`, append(append([]any{}, kw.args...), kw.args...)...)
	if err != nil {
		return Result{}, err
	}
	for chart.Next() {
		var b Bar
		if err := chart.Scan(&b.Label, &b.Value); err != nil {
			chart.Close()
			return Result{}, err
		}
		res.Chart = append(res.Chart, b)
		res.Total += b.Value
	}
	chart.Close()
	if err := chart.Err(); err != nil {
		return Result{}, err
	}
	limit := PageRows
	if f.All {
		limit = math.MaxInt32 // every row: PostgreSQL refuses SQLite's LIMIT -1
	}
	rows, err := tx.Query(`SELECT i.barcode, r.title, i.call_number, b.name, t.name, i.created_at, coalesce(i.last_borrowed_at, '')
		FROM items i JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id
		JOIN item_types t ON t.id = i.item_type_id`+w.String()+`
		ORDER BY i.id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var barcode, title, call, branch, typ, added, last string
		if err := rows.Scan(&barcode, &title, &call, &branch, &typ, &added, &last); err != nil {
			return Result{}, err
		}
		if last == "" {
			last = "never"
		}
		res.Rows = append(res.Rows, []string{barcode, title, call, branch, typ, day(added), day(last)})
	}
	res.Truncated = len(res.Rows) < res.Total
	return res, rows.Err()
}

// collectionReport counts the items (withdrawn ones left out) by home branch and
// item type, with how many of them are on loan and how many lost or missing.
func collectionReport(tx *db.Tx, f Filter) (Result, error) {
	// From collection_stats, which RefreshCollection counts every minute (and
	// Rollup when it is older than two): counting live needs an index with the
	// status in it, which every checkout and checkin would write.
	var w where
	w.add(f.BranchID != 0, "s.branch_id = ?", f.BranchID)
	w.add(f.ItemTypeID != 0, "s.item_type_id = ?", f.ItemTypeID)
	rows, err := tx.Query(`SELECT b.name, t.name, s.items, s.on_loan, s.gone FROM collection_stats s
		JOIN branches b ON b.id = s.branch_id JOIN item_types t ON t.id = s.item_type_id`+w.String()+`
		ORDER BY b.name, t.name`, w.args...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res := Result{
		Columns: []Column{{Name: "Branch"}, {Name: "Item type"}, {Name: "Items", Numeric: true},
			{Name: "On loan", Numeric: true}, {Name: "Lost or missing", Numeric: true}},
		TotalLabel: "items", ChartTitle: "Items by branch",
	}
	for rows.Next() {
		var branch, typ string
		var n, loaned, gone int
		if err := rows.Scan(&branch, &typ, &n, &loaned, &gone); err != nil {
			return Result{}, err
		}
		res.Rows = append(res.Rows, []string{branch, typ, itoa(n), itoa(loaned), itoa(gone)})
		if k := len(res.Chart); k > 0 && res.Chart[k-1].Label == branch {
			res.Chart[k-1].Value += n
		} else {
			res.Chart = append(res.Chart, Bar{Label: branch, Value: n})
		}
		res.Total += n
	}
	return res, rows.Err()
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return fmt.Sprintf("%c%s", s[0]|0x20, s[1:])
}

// dayKey is a day as loan_stats keys it: the number YYYYMMDD.
func dayKey(t time.Time) int {
	return t.Year()*10000 + int(t.Month())*100 + t.Day()
}
