package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// anonymisable selects the returned loans that may lose their patron, returned
// before ?1: never a current loan; never one of a patron who keeps their
// history (patrons.keep_history); never one with a charge on it while its
// patron still owes money (payments are not allocated to charges, so a charge
// counts as settled once the patron owes nothing); the desk needs to see what
// an unpaid charge was for.
const anonymisable = `l.patron_id IS NOT NULL AND l.returned_at IS NOT NULL AND l.returned_at < ?1
	AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = l.patron_id AND p.keep_history <> 0)
	AND NOT (EXISTS (SELECT 1 FROM ledger g WHERE g.loan_id = l.id AND g.amount_cents > 0)
		AND (SELECT coalesce(sum(b.amount_cents), 0) FROM ledger b WHERE b.patron_id = l.patron_id) > 0)`

// oldNotices selects the notice items older than ?1 that may go with the loan
// history: about a loan since returned, a hold since closed, or a card expiry
// long past, grouped into a message that is no longer waiting to be sent, of a
// patron who does not keep their history. Notices of what is still current
// stay, so that notice_items_once keeps the daily run from queuing them again.
const oldNotices = `ni.created_at < ?1 AND ni.delivery <> ''
	AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = ni.patron_id AND p.keep_history <> 0)
	AND NOT EXISTS (SELECT 1 FROM notice_messages m WHERE m.id = ni.message_id AND m.status = 'pending')
	AND CASE
		WHEN ni.trigger IN ('predue', 'overdue', 'lost_bill')
			THEN EXISTS (SELECT 1 FROM loans l WHERE l.id = ni.object_id AND l.returned_at IS NOT NULL AND l.returned_at < ?1)
		WHEN ni.trigger IN ('hold_available', 'hold_expiring')
			THEN EXISTS (SELECT 1 FROM holds h WHERE h.id = ni.object_id AND h.status NOT IN ('queued', 'in_transit', 'waiting') AND h.closed_at < ?1)
		ELSE ni.at <> '' AND ni.at < ?1
	END`

// oldMessages selects the messages older than ?1 no longer waiting to be sent
// whose notice items are all gone, of a patron who does not keep their history.
const oldMessages = `m.created_at < ?1 AND m.status <> 'pending'
	AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = m.patron_id AND p.keep_history <> 0)
	AND NOT EXISTS (SELECT 1 FROM notice_items ni WHERE ni.message_id = m.id)`

// AnonymiseResult says how many loans, and notice items and messages, a run
// anonymised (or would).
type AnonymiseResult struct {
	Loans   int
	Notices int
}

// Anonymise takes the patron off every loan returned before cutoff that may be
// anonymised (see anonymisable), in write transactions of opt.Chunk loans, and
// deletes the notices about them (see oldNotices). It is idempotent: a second
// run with the same cutoff finds nothing. One audit entry records the run with
// its counts.
func Anonymise(ctx context.Context, d *db.DB, cutoff time.Time, opt Options) (AnonymiseResult, error) {
	var res AnonymiseResult
	cut := db.FormatTime(cutoff.UTC())
	if opt.DryRun {
		err := d.Read(ctx, func(tx *db.Tx) error {
			if err := tx.QueryRow(`SELECT count(*) FROM loans l WHERE `+anonymisable, cut).Scan(&res.Loans); err != nil {
				return fmt.Errorf("count loans to anonymise: %w", err)
			}
			// The loans this run would anonymise are not yet returned-and-named
			// for the notice rule's purpose; count what the rule matches today.
			var items, msgs int
			if err := tx.QueryRow(`SELECT count(*) FROM notice_items ni WHERE `+oldNotices, cut).Scan(&items); err != nil {
				return fmt.Errorf("count old notices: %w", err)
			}
			if err := tx.QueryRow(`SELECT count(*) FROM notice_messages m WHERE m.created_at < ?1 AND m.status <> 'pending'
				AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = m.patron_id AND p.keep_history <> 0)`, cut).Scan(&msgs); err != nil {
				return fmt.Errorf("count old notices: %w", err)
			}
			res.Notices = items + msgs
			return nil
		})
		return res, err
	}

	chunk := opt.chunk()
	var last int64
	for {
		var ids []int64
		start := time.Now()
		err := d.Write(ctx, func(tx *db.Tx) error {
			var err error
			ids, err = tx.IDs(`SELECT l.id FROM loans l WHERE `+anonymisable+` AND l.id > ?2 ORDER BY l.id LIMIT ?3`, cut, last, chunk)
			if err != nil {
				return fmt.Errorf("find loans to anonymise: %w", err)
			}
			return anonymiseLoans(tx, ids)
		})
		if err != nil {
			return res, err
		}
		res.Loans += len(ids)
		if len(ids) < chunk {
			break
		}
		last = ids[len(ids)-1]
		opt.pause(ctx, time.Since(start))
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}

	for _, q := range []string{
		`DELETE FROM notice_items WHERE id IN (SELECT ni.id FROM notice_items ni WHERE ` + oldNotices + ` LIMIT ?2)`,
		`DELETE FROM notice_messages WHERE id IN (SELECT m.id FROM notice_messages m WHERE ` + oldMessages + ` LIMIT ?2)`,
	} {
		for {
			var n int64
			start := time.Now()
			err := d.Write(ctx, func(tx *db.Tx) error {
				r, err := tx.Exec(q, cut, chunk)
				if err != nil {
					return fmt.Errorf("delete old notices: %w", err)
				}
				n, err = r.RowsAffected()
				return err
			})
			if err != nil {
				return res, err
			}
			res.Notices += int(n)
			if n < int64(chunk) {
				break
			}
			opt.pause(ctx, time.Since(start))
		}
	}

	err := d.Write(ctx, func(tx *db.Tx) error {
		return tx.Audit(opt.actor(), "privacy.anonymise", "loans", 0,
			fmt.Sprintf("%d loans returned before %s anonymised; %d old notice items and messages deleted", res.Loans, cut, res.Notices))
	})
	return res, err
}

// anonymiseLoans takes the patron off the loans ids, in tx, keeping the
// patron's category and home branch on each for the statistics, and recording
// on the patron the latest return among them (patrons.anonymised_until), which
// still counts as their activity for the purge. Charges on those loans no
// longer name the loan nor describe it (genericCharge): the charge stays on the
// patron's ledger, with its kind, amount and day, so balances and cash-ups do
// not change.
func anonymiseLoans(tx *db.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	in := idsIn(tx, "?1")
	if _, err := tx.Exec(`UPDATE patrons SET anonymised_until = `+greatest(tx)+`(coalesce(anonymised_until, ''),
			(SELECT max(l.returned_at) FROM loans l WHERE l.patron_id = patrons.id AND l.id IN (`+in+`)))
		WHERE id IN (SELECT l.patron_id FROM loans l WHERE l.id IN (`+in+`))`, string(list)); err != nil {
		return fmt.Errorf("record anonymised activity: %w", err)
	}
	if _, err := tx.Exec(`UPDATE loans SET
			patron_category_id = (SELECT p.category_id FROM patrons p WHERE p.id = loans.patron_id),
			patron_branch_id = (SELECT p.home_branch_id FROM patrons p WHERE p.id = loans.patron_id),
			patron_id = NULL
		WHERE id IN (`+in+`) AND patron_id IS NOT NULL AND returned_at IS NOT NULL`, string(list)); err != nil {
		return fmt.Errorf("anonymise loans: %w", err)
	}
	if _, err := tx.Exec(`UPDATE ledger SET loan_id = NULL, description = `+genericCharge+`
		WHERE loan_id IN (`+in+`)`, string(list)); err != nil {
		return fmt.Errorf("detach charges from anonymised loans: %w", err)
	}
	return nil
}

// genericCharge is the description a ledger row keeps once its loan is
// anonymised: circulation describes a charge by the item's title and barcode
// ("Overdue: <title> (<barcode>), 3 days late"), which would keep on the
// patron's ledger what the loan no longer says. The kind and amount stay.
const genericCharge = `CASE kind
		WHEN 'overdue' THEN 'Overdue fine'
		WHEN 'lost' THEN 'Lost item'
		WHEN 'processing' THEN 'Processing fee'
		WHEN 'fee' THEN 'Fee'
		WHEN 'manual' THEN 'Charge'
		WHEN 'void' THEN 'Voided charge'
		WHEN 'credit' THEN 'Credited charge'
		WHEN 'waiver' THEN 'Waiver'
		WHEN 'payment' THEN 'Payment'
		WHEN 'refund' THEN 'Refund'
		ELSE 'Charge' END`
