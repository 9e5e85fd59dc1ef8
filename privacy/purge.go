package privacy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// lastActivity is a patron p's last activity, from what the database records:
// the card's creation; a loan issued or returned (and, once anonymised, the
// latest return among them: anonymised_until); a hold placed or closed; a
// charge, payment or waiver; and every audited change or event about the
// patron (an edit, a card renewal, a PIN change, a block, a sign-in to the
// patrons' site, a change of notice preferences).
const lastActivity = `max(p.created_at, coalesce(p.anonymised_until, ''),
	coalesce((SELECT max(max(l.issued_at, coalesce(l.returned_at, ''))) FROM loans l WHERE l.patron_id = p.id), ''),
	coalesce((SELECT max(max(h.placed_at, coalesce(h.closed_at, ''))) FROM holds h WHERE h.patron_id = p.id), ''),
	coalesce((SELECT max(g.created_at) FROM ledger g WHERE g.patron_id = p.id), ''),
	coalesce((SELECT max(a.at) FROM audit_log a WHERE a.object_type = 'patron' AND a.object_id = p.id), ''))`

// purgeBlockers are the reasons a patron may not be purged, as one text column
// (” when there is none), for patron p.
const purgeBlockers = `trim(
	CASE WHEN coalesce((SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id), 0) <> 0 THEN 'owes ' || printf('%.2f', (SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id) / 100.0) || '; ' ELSE '' END ||
	CASE WHEN EXISTS (SELECT 1 FROM loans l WHERE l.patron_id = p.id AND l.returned_at IS NULL) THEN 'has items checked out; ' ELSE '' END ||
	CASE WHEN EXISTS (SELECT 1 FROM holds h WHERE h.patron_id = p.id AND h.status IN ('queued', 'in_transit', 'waiting')) THEN 'has open holds; ' ELSE '' END, '; ')`

// PurgeInactive deletes every patron whose last activity (lastActivity) is
// before cutoff and who owes nothing, has nothing checked out and no open hold,
// opt.Chunk patrons per write transaction. One audit entry per patron records
// the purge by id only.
func PurgeInactive(ctx context.Context, d *db.DB, cutoff time.Time, opt Options) (int, error) {
	cut := db.FormatTime(cutoff.UTC())
	find := `SELECT p.id FROM patrons p WHERE ` + lastActivity + ` < ?1 AND ` + purgeBlockers + ` = '' AND p.id > ?2 ORDER BY p.id LIMIT ?3`
	if opt.DryRun {
		var n int
		err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM patrons p WHERE `+lastActivity+` < ?1 AND `+purgeBlockers+` = ''`, cut).Scan(&n)
		})
		return n, err
	}
	// A patron carries more rows than a loan: a tenth of the chunk each time.
	chunk := max(1, opt.chunk()/10)
	var last int64
	total := 0
	for {
		var ids []int64
		start := time.Now()
		err := d.Write(ctx, func(tx *db.Tx) error {
			var err error
			ids, err = queryIDs(tx, find, cut, last, chunk)
			if err != nil {
				return fmt.Errorf("find inactive patrons: %w", err)
			}
			for _, id := range ids {
				if err := purge(tx, opt.actor(), id, "inactive since before "+cut); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(ids)
		if len(ids) < chunk {
			return total, nil
		}
		last = ids[len(ids)-1]
		opt.pause(ctx, time.Since(start))
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// Purge deletes patron id now, at staff's request (the patron asked to be
// forgotten): refused, saying why, while they owe money, have items checked
// out or open holds.
func Purge(tx *db.Tx, actor stacks.Actor, id int64) error {
	return purge(tx, actor, id, "at staff's request")
}

// PurgeBlockers says why patron id may not be purged ("" when they may).
func PurgeBlockers(tx *db.Tx, id int64) (string, error) {
	var why string
	err := tx.QueryRow(`SELECT `+purgeBlockers+` FROM patrons p WHERE p.id = ?`, id).Scan(&why)
	if err != nil {
		return "", notFound(err, id)
	}
	return why, nil
}

// purge deletes patron id and every row about them, in tx: their loans are
// anonymised (the statistics keep them), their ledger rows detached
// (detachLedger), their closed holds, notices, notice preferences, patrons'
// site sessions and sign-in and PIN lockouts deleted, and the audit log's
// entries about them scrubbed of their name, card, email and phone (scrubAudit).
// The audit log keeps one entry, "patron.purge", with the id only.
func purge(tx *db.Tx, actor stacks.Actor, id int64, why string) error {
	var card, surname, first, email, phone string
	err := tx.QueryRow(`SELECT card, surname, first_name, email, phone FROM patrons WHERE id = ?`, id).
		Scan(&card, &surname, &first, &email, &phone)
	if err != nil {
		return notFound(err, id)
	}
	blockers, err := PurgeBlockers(tx, id)
	if err != nil {
		return err
	}
	if blockers != "" {
		return stacks.Errorf(stacks.EINVALID, "This patron cannot be deleted yet: the patron %s. Settle the account, check the items in and cancel the holds first.", strings.ReplaceAll(blockers, "; ", ", "))
	}
	loans, err := queryIDs(tx, `SELECT id FROM loans WHERE patron_id = ? AND returned_at IS NOT NULL`, id)
	if err != nil {
		return fmt.Errorf("find the patron's loans: %w", err)
	}
	if err := anonymiseLoans(tx, loans); err != nil {
		return err
	}
	if err := detachLedger(tx, id); err != nil {
		return err
	}
	if err := scrubAudit(tx, id, card, strings.TrimSpace(first+" "+surname), email, phone); err != nil {
		return err
	}
	for _, q := range []string{
		// A checkin that trapped one of their holds keeps its row (statistics)
		// without the hold.
		`UPDATE checkins SET hold_id = NULL WHERE hold_id IN (SELECT id FROM holds WHERE patron_id = ?1)`,
		`DELETE FROM holds WHERE patron_id = ?1`,
		`DELETE FROM notice_items WHERE patron_id = ?1`,
		`DELETE FROM notice_items WHERE message_id IN (SELECT id FROM notice_messages WHERE patron_id = ?1)`,
		`DELETE FROM notice_messages WHERE patron_id = ?1`,
		`DELETE FROM notice_preferences WHERE patron_id = ?1`,
		// opac's session data is JSON with the patron's id under i.pid
		// (opac.sessPatronID).
		`DELETE FROM opac_sessions WHERE CASE WHEN json_valid(CAST(data AS TEXT)) THEN json_extract(CAST(data AS TEXT), '$.i.pid') END = ?1`,
		`DELETE FROM sip_lockouts WHERE kind = 'pin' AND subject = ?2`,
		`DELETE FROM login_throttle WHERE key = 'card:' || ?3`,
		`DELETE FROM patrons WHERE id = ?1`,
	} {
		if _, err := tx.Exec(q, id, strconv.FormatInt(id, 10), card); err != nil {
			return fmt.Errorf("purge patron %d: %w", id, err)
		}
	}
	return tx.Audit(actor, "patron.purge", "patron", id, why)
}

// detachLedger holds the one decision about a purged patron's ledger rows. A
// purged patron owes nothing (purge refuses otherwise), so their rows sum to
// zero, but the payments among them are part of past days' cash-ups.
//
// On this branch ledger.patron_id is NOT NULL, so the rows are deleted: a past
// day's payments total loses the purged patron's payments. Migration 0014
// (issue 19's branch) makes ledger.patron_id nullable; with it, this function
// must become `UPDATE ledger SET patron_id = NULL WHERE patron_id = ?`, which
// keeps every amount and day and names no one (see docs/privacy.md).
func detachLedger(tx *db.Tx, patronID int64) error {
	if _, err := tx.Exec(`DELETE FROM ledger WHERE patron_id = ?`, patronID); err != nil {
		return fmt.Errorf("detach the patron's ledger: %w", err)
	}
	return nil
}

// scrubAudit takes a purged patron out of the audit log: the entries about
// the patron and their holds keep their action and time, with the detail
// replaced by "[purged]"; any other entry whose actor or detail names the
// card, the full name, the email or the phone has that text replaced by
// "[purged]".
func scrubAudit(tx *db.Tx, id int64, card, name, email, phone string) error {
	if _, err := tx.Exec(`UPDATE audit_log SET detail = '[purged]'
		WHERE (object_type = 'patron' AND object_id = ?1)
		   OR (object_type = 'hold' AND object_id IN (SELECT h.id FROM holds h WHERE h.patron_id = ?1))`, id); err != nil {
		return fmt.Errorf("scrub the audit log: %w", err)
	}
	for _, s := range []string{card, name, email, phone} {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := tx.Exec(`UPDATE audit_log SET actor = replace(actor, ?1, '[purged]'), detail = replace(detail, ?1, '[purged]')
			WHERE instr(actor, ?1) > 0 OR instr(detail, ?1) > 0`, s); err != nil {
			return fmt.Errorf("scrub the audit log: %w", err)
		}
	}
	return nil
}

func notFound(err error, id int64) error {
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron %d; they may have been deleted already. Search for the patron again.", id)
	}
	return err
}
