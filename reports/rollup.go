package reports

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// RollupBatch is how many loans one rollup transaction adds at most, so that a
// long backlog (a restored backup, an import) holds the writer for a few
// milliseconds at a time and the desk's writes go between batches.
const RollupBatch = 5000

// RollupInterval is how often stacks serve rolls up the new loans: the most a
// report's loan counts can lag behind the desk when the rollup before the report
// could not run.
const RollupInterval = time.Minute

// Rollup adds the loans issued since the last rollup to the statistics the
// circulation, most borrowed and not borrowed reports read (loan_stats,
// loan_titles, item_loans, items.last_borrowed_at: migration 0012), in batches of
// RollupBatch loans, each its own write transaction. It is how those tables are
// kept without a trigger or an extra write in the desk's checkout: stacks serve
// runs it every RollupInterval, and the report pages run it before they read.
//
// Loans are taken by id above report_rollup.last_loan_id. What is counted of a
// loan (its issue time, branch, item and patron) never changes after the insert:
// a renewal changes due_at and renewals, a return returned_at and
// return_branch_id. So each loan is counted once, when it is first rolled up.
func Rollup(ctx context.Context, d *db.DB) (int, error) {
	total, err := rollupLoans(ctx, d)
	if err != nil {
		return total, err
	}
	// The collection counts, if the background job has not counted them lately
	// (CGI, or the first run): a read of every item.
	var at string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT collection_at FROM report_rollup WHERE id = 1`).Scan(&at)
	}); err != nil {
		return total, fmt.Errorf("reports rollup: %w", err)
	}
	if t, err := db.ParseTime(at); err != nil || d.Now().Sub(t) > 2*RollupInterval {
		if err := RefreshCollection(ctx, d); err != nil {
			return total, err
		}
	}
	// The same for the open loans, which only the background job prunes.
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT open_loans_at FROM report_rollup WHERE id = 1`).Scan(&at)
	}); err != nil {
		return total, fmt.Errorf("reports rollup: %w", err)
	}
	if t, err := db.ParseTime(at); err != nil || d.Now().Sub(t) > 2*RollupInterval {
		return total, PruneOpenLoans(ctx, d)
	}
	return total, nil
}

// PruneOpenLoans brings open_loans (migration 0012) up to date with the loans
// rolled up: it drops the loans returned since, and takes the due date of the
// renewed ones. The overdue report is right without it (it checks each loan it
// reads from open_loans against loans), but reads every returned loan left in
// open_loans. The loans are compared in a read transaction, so the desk's writes
// go on meanwhile; the changes are written in one short write.
func PruneOpenLoans(ctx context.Context, d *db.DB) error {
	type change struct {
		id       int64
		returned bool
	}
	var changes []change
	err := d.Read(ctx, func(tx *db.Tx) error {
		rs, err := tx.Query(`SELECT o.loan_id, l.id IS NULL OR l.returned_at IS NOT NULL
			FROM open_loans o LEFT JOIN loans l ON l.id = o.loan_id
			WHERE l.id IS NULL OR l.returned_at IS NOT NULL OR l.due_at <> o.due_at`)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var c change
			if err := rs.Scan(&c.id, &c.returned); err != nil {
				return err
			}
			changes = append(changes, c)
		}
		return rs.Err()
	})
	if err != nil {
		return fmt.Errorf("prune the open loans: %w", err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		for _, c := range changes {
			if _, err := tx.Exec(`DELETE FROM open_loans WHERE loan_id = ?`, c.id); err != nil {
				return err
			}
			// Still open (renewed): under its new due date, unless it was
			// returned since the read.
			if !c.returned {
				if _, err := tx.Exec(`INSERT INTO open_loans (loan_id, due_at)
					SELECT id, due_at FROM loans WHERE id = ? AND returned_at IS NULL`, c.id); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(`UPDATE report_rollup SET open_loans_at = ? WHERE id = 1`, db.FormatTime(tx.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("prune the open loans: %w", err)
	}
	return nil
}

// RefreshCollection counts the collection by home branch and item type into
// collection_stats: every item is read (in a read transaction, so the desk's
// writes go on meanwhile), and the counts are written in one short write.
func RefreshCollection(ctx context.Context, d *db.DB) error {
	type row struct{ branch, typ, items, onLoan, gone int64 }
	var rows []row
	err := d.Read(ctx, func(tx *db.Tx) error {
		// NOT INDEXED (SQLite's: scan the table, not an index) has no
		// PostgreSQL counterpart; its planner chooses alone.
		rs, err := tx.Query(`SELECT home_branch_id, item_type_id, count(*),
				sum(CASE WHEN status = 'on_loan' THEN 1 ELSE 0 END), sum(CASE WHEN status IN ('lost', 'missing') THEN 1 ELSE 0 END)
			FROM items` + db.Pick(tx, ` NOT INDEXED`, ``) + ` WHERE status <> 'withdrawn' GROUP BY 1, 2`)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.branch, &r.typ, &r.items, &r.onLoan, &r.gone); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		return fmt.Errorf("count the collection: %w", err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`DELETE FROM collection_stats`); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := tx.Exec(`INSERT INTO collection_stats (branch_id, item_type_id, items, on_loan, gone) VALUES (?, ?, ?, ?, ?)`,
				r.branch, r.typ, r.items, r.onLoan, r.gone); err != nil {
				return err
			}
		}
		_, err := tx.Exec(`UPDATE report_rollup SET collection_at = ? WHERE id = 1`, db.FormatTime(tx.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("count the collection: %w", err)
	}
	return nil
}

// rollupLoans rolls up the new loans, RollupBatch at a time.
func rollupLoans(ctx context.Context, d *db.DB) (int, error) {
	total := 0
	for {
		var n int
		err := d.Write(ctx, func(tx *db.Tx) (err error) {
			n, err = rollupBatch(tx, RollupBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("reports rollup: %w", err)
		}
		total += n
		if n < RollupBatch {
			return total, nil
		}
	}
}

// rollupBatch rolls up at most max loans after the last one rolled up.
func rollupBatch(tx *db.Tx, max int) (int, error) {
	var last, upto int64
	var n int
	if err := tx.QueryRow(`SELECT last_loan_id FROM report_rollup WHERE id = 1`).Scan(&last); err != nil {
		return 0, err
	}
	// Plain ? placeholders, each once, in order (db rewrites them to $n for
	// PostgreSQL); the derived table is named, which PostgreSQL before 16 needs.
	if err := tx.QueryRow(`SELECT count(*), coalesce(max(id), ?) FROM (SELECT id FROM loans WHERE id > ? ORDER BY id LIMIT ?) AS batch`,
		last, last, max).Scan(&n, &upto); err != nil {
		return 0, err
	}
	now := db.FormatTime(tx.Now())
	if n == 0 {
		_, err := tx.Exec(`UPDATE report_rollup SET rolled_at = ? WHERE id = 1`, now)
		return 0, err
	}
	stmts := []string{
		`INSERT INTO loan_stats (day, branch_id, item_type_id, category_id, loans)
		SELECT CAST(replace(substr(l.issued_at, 1, 10), '-', '') AS INTEGER), l.branch_id, i.item_type_id, coalesce(` + LoanCategory + `, 0), count(*)
		FROM loans l JOIN items i ON i.id = l.item_id` + loanPatronJoin + `
		WHERE l.id > ? AND l.id <= ?
		GROUP BY 1, 2, 3, 4
		ON CONFLICT (day, branch_id, item_type_id, category_id) DO UPDATE SET loans = loan_stats.loans + excluded.loans`,
		`INSERT INTO loan_titles (issued, loan_id, record_id, branch_id, item_type_id)
		SELECT ` + db.Pick(tx, `CAST(strftime('%s', l.issued_at) AS INTEGER)`, `CAST(extract(epoch FROM CAST(l.issued_at AS timestamptz)) AS bigint)`) + `, l.id, i.record_id, l.branch_id, i.item_type_id
		FROM loans l JOIN items i ON i.id = l.item_id WHERE l.id > ? AND l.id <= ?`,
		`INSERT INTO item_loans (item_id, loan_id) SELECT item_id, id FROM loans WHERE id > ? AND id <= ?`,
		`INSERT INTO open_loans (loan_id, due_at) SELECT id, due_at FROM loans WHERE id > ? AND id <= ? AND returned_at IS NULL`,
		`UPDATE items SET last_borrowed_at = n.m
		FROM (SELECT item_id, max(issued_at) AS m FROM loans WHERE id > ? AND id <= ? GROUP BY item_id) AS n
		WHERE items.id = n.item_id AND (items.last_borrowed_at IS NULL OR items.last_borrowed_at < n.m)`,
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q, last, upto); err != nil {
			return 0, err
		}
	}
	_, err := tx.Exec(`UPDATE report_rollup SET last_loan_id = ?, rolled_at = ? WHERE id = 1`, upto, now)
	return n, err
}

// RolledUpAt is when the loan statistics were last rolled up (the loans issued
// after it may not be counted yet), and when the collection was last counted.
func RolledUpAt(tx *db.Tx) (loans, collection time.Time, err error) {
	var l db.Time
	var c string
	if err := tx.QueryRow(`SELECT rolled_at, collection_at FROM report_rollup WHERE id = 1`).Scan(&l, &c); err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("reports rollup: %w", err)
	}
	ct, _ := db.ParseTime(c) // zero when never counted
	return l.Time, ct, nil
}

// RunRollups rolls up the new loans every interval until ctx ends: stacks serve's
// background job. A failure is logged and tried again at the next tick.
func RunRollups(ctx context.Context, d *db.DB, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := rollupLoans(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("reports rollup", "err", err)
		} else if n > 0 {
			logger.Debug("reports rollup", "loans", n)
		}
		if err := RefreshCollection(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("reports rollup", "err", err)
		}
		if err := PruneOpenLoans(ctx, d); err != nil && ctx.Err() == nil {
			logger.Warn("reports rollup", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
