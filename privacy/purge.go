package privacy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

// lastActivity is a patron p's last activity, from what the database records:
// the card's creation; a loan issued or returned (and, once anonymised, the
// latest return among them: anonymised_until); a hold placed or closed; a
// charge, payment or waiver; and every audited change or event about the
// patron (an edit, a card renewal, a PIN change, a block, a sign-in to the
// patrons' site, a change of notice preferences). An export of their data
// (patron.export) is staff's act, not the patron's, and does not count; a
// load that updates them does (the school says they are current).
func lastActivity(tx *db.Tx) string {
	most := greatest(tx)
	return most + `(p.created_at, coalesce(p.anonymised_until, ''),
	coalesce((SELECT max(` + most + `(l.issued_at, coalesce(l.returned_at, ''))) FROM loans l WHERE l.patron_id = p.id), ''),
	coalesce((SELECT max(` + most + `(h.placed_at, coalesce(h.closed_at, ''))) FROM holds h WHERE h.patron_id = p.id), ''),
	coalesce((SELECT max(g.created_at) FROM ledger g WHERE g.patron_id = p.id), ''),
	coalesce((SELECT max(a.at) FROM audit_log a WHERE a.object_type = 'patron' AND a.object_id = p.id AND a.action <> 'patron.export'), ''))`
}

// inactive selects the patrons p inactive since before ?1: no activity since
// (lastActivity), and a card that expired before it too. A patron whose card
// is still valid is not inactive, however quiet: the library (or a school's
// load) said they are a member until then.
func inactive(tx *db.Tx) string { return lastActivity(tx) + ` < ?1 AND p.expires_on < ?1` }

// purgeBlockers are the reasons a patron may not be purged, as one text column
// (” when there is none), for patron p.
var purgeBlockers = `trim(
	CASE WHEN coalesce((SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id), 0) <> 0 AND (SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id) > 0
		THEN 'owes ' || ` + moneySQL(`(SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id)`) + ` || '; '
		WHEN coalesce((SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id), 0) < 0
		THEN 'is in credit ' || ` + moneySQL(`-(SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = p.id)`) + ` || ' (refund it first); ' ELSE '' END ||
	CASE WHEN EXISTS (SELECT 1 FROM loans l WHERE l.patron_id = p.id AND l.returned_at IS NULL) THEN 'has items checked out; ' ELSE '' END ||
	CASE WHEN EXISTS (SELECT 1 FROM holds h WHERE h.patron_id = p.id AND h.status IN ('queued', 'in_transit', 'waiting')) THEN 'has open holds; ' ELSE '' END, '; ')`

// PurgeInactive deletes every patron whose last activity (lastActivity) is
// before cutoff, whose card expired before cutoff too (inactive), and who
// owes nothing, has nothing checked out and no open hold,
// opt.Chunk patrons per write transaction. One audit entry per patron records
// the purge by id only.
func PurgeInactive(ctx context.Context, d *db.DB, cutoff time.Time, opt Options) (int, error) {
	cut := db.FormatTime(cutoff.UTC())
	find := func(tx *db.Tx) string {
		return `SELECT p.id FROM patrons p WHERE ` + inactive(tx) + ` AND ` + purgeBlockers + ` = '' AND p.id > ?2 ORDER BY p.id LIMIT ?3`
	}
	if opt.DryRun {
		var n int
		err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM patrons p WHERE `+inactive(tx)+` AND `+purgeBlockers+` = ''`, cut).Scan(&n)
		})
		return n, err
	}
	// A patron carries more rows than a loan: a tenth of the chunk each time.
	chunk := max(1, opt.chunk()/10)
	var last int64
	total := 0
	for {
		// First, on a read connection (the desk's writes go on meanwhile): the
		// next chunk of patrons, and the audit entries that name them, found
		// by reading the whole log.
		var ids []int64
		var sc auditScrub
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			if ids, err = tx.IDs(find(tx), cut, last, chunk); err != nil {
				return fmt.Errorf("find inactive patrons: %w", err)
			}
			sc, err = findAuditText(tx, ids)
			return err
		})
		if err != nil || len(ids) == 0 {
			return total, err
		}
		// Then a short write: each patron still inactive is purged, and the
		// audit entries found (and any written since) are scrubbed.
		start := time.Now()
		purged := 0
		err = d.Write(ctx, func(tx *db.Tx) error {
			still, err := tx.IDs(`SELECT p.id FROM patrons p WHERE `+inactive(tx)+` AND `+purgeBlockers+` = ''
				AND p.id IN (`+idsIn(tx, "?2")+`) ORDER BY p.id`, cut, jsonIDs(ids))
			if err != nil {
				return fmt.Errorf("find inactive patrons: %w", err)
			}
			for _, id := range still {
				if err := purge(tx, opt.actor(), id, "inactive since before "+cut); err != nil {
					return err
				}
			}
			purged = len(still)
			return sc.apply(tx)
		})
		if err != nil {
			return total, err
		}
		total += purged
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
//
// The audit log is searched for the patron's card, name, email and phone
// first, in a read transaction, so that the write transaction stays short.
func Purge(ctx context.Context, d *db.DB, actor stacks.Actor, id int64) error {
	var sc auditScrub
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		sc, err = findAuditText(tx, []int64{id})
		return err
	})
	if err != nil {
		return err
	}
	return d.Write(ctx, func(tx *db.Tx) error {
		if err := purge(tx, actor, id, "at staff's request"); err != nil {
			return err
		}
		return sc.apply(tx)
	})
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
// entries about them or their holds scrubbed (scrubAudit); the caller takes
// their card, name, email and phone out of the rest of the log (auditScrub)
// in the same transaction. The audit log keeps one entry, "patron.purge", with
// the id only.
func purge(tx *db.Tx, actor stacks.Actor, id int64, why string) error {
	var card string
	err := tx.QueryRow(`SELECT card FROM patrons WHERE id = ?`, id).Scan(&card)
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
	loans, err := tx.IDs(`SELECT id FROM loans WHERE patron_id = ? AND returned_at IS NOT NULL`, id)
	if err != nil {
		return fmt.Errorf("find the patron's loans: %w", err)
	}
	if err := anonymiseLoans(tx, loans); err != nil {
		return err
	}
	if err := detachLedger(tx, id); err != nil {
		return err
	}
	if err := scrubAudit(tx, id); err != nil {
		return err
	}
	// Each statement gets the one argument it reads (PostgreSQL refuses more
	// arguments than parameters).
	for _, q := range []struct {
		sql string
		arg any
	}{
		// A checkin that trapped one of their holds keeps its row (statistics)
		// without the hold.
		{`UPDATE checkins SET hold_id = NULL WHERE hold_id IN (SELECT id FROM holds WHERE patron_id = ?)`, id},
		{`UPDATE checkins SET expired_hold_id = NULL WHERE expired_hold_id IN (SELECT id FROM holds WHERE patron_id = ?)`, id},
		{`DELETE FROM holds WHERE patron_id = ?`, id},
		{`DELETE FROM notice_items WHERE patron_id = ?`, id},
		{`DELETE FROM notice_items WHERE message_id IN (SELECT id FROM notice_messages WHERE patron_id = ?)`, id},
		{`DELETE FROM notice_messages WHERE patron_id = ?`, id},
		{`DELETE FROM notice_preferences WHERE patron_id = ?`, id},
		// opac's session data is JSON with the patron's id under i.pid
		// (opac.sessPatronID).
		{`DELETE FROM opac_sessions WHERE ` + db.SessionValue(tx, "pid") + ` = ?`, id},
		// Its wrong PINs over SIP2.
		{`DELETE FROM login_throttle WHERE key = ?`, passwords.PINKey(id)},
		{`DELETE FROM login_throttle WHERE key = 'card:' || ?`, card},
		// Its wrong PINs counted per address it had signed in from.
		{`DELETE FROM login_throttle WHERE substr(key, 1, length(CAST(?1 AS TEXT))) = ?1`, "card:" + card + " "},
		{`DELETE FROM patrons WHERE id = ?`, id},
	} {
		if _, err := tx.Exec(q.sql, q.arg); err != nil {
			return fmt.Errorf("purge patron %d: %w", id, err)
		}
	}
	if err := passwords.ForgetAddresses(tx, patrons.KnownCard(card)); err != nil {
		return fmt.Errorf("purge patron %d: %w", id, err)
	}
	return tx.Audit(actor, "patron.purge", "patron", id, why)
}

// detachLedger holds the one decision about a purged patron's ledger rows. A
// purged patron owes nothing (purge refuses otherwise), so their rows sum to
// zero, but the payments and refunds among them are part of past days'
// cash-ups: the rows stay, with every amount, method, desk and day, and name
// no one (ledger.patron_id NULL, migration 0014). Allocations and reversals
// link rows to rows, not to the patron, and stay with them.
func detachLedger(tx *db.Tx, patronID int64) error {
	if _, err := tx.Exec(`UPDATE ledger SET patron_id = NULL, description = '' WHERE patron_id = ?`, patronID); err != nil {
		return fmt.Errorf("detach the patron's ledger: %w", err)
	}
	return nil
}

// scrubAudit replaces with "[purged]" the detail of the audit entries about
// purged patron id or their holds; each keeps its action and time.
func scrubAudit(tx *db.Tx, id int64) error {
	for _, q := range []string{
		`UPDATE audit_log SET detail = '[purged]' WHERE object_type = 'patron' AND object_id = ?1`,
		`UPDATE audit_log SET detail = '[purged]' WHERE object_type = 'hold' AND object_id IN (SELECT h.id FROM holds h WHERE h.patron_id = ?1)`,
	} {
		if _, err := tx.Exec(q, id); err != nil {
			return fmt.Errorf("scrub the audit log: %w", err)
		}
	}
	return nil
}

// auditScrub is what a purge takes out of the audit log besides the entries
// about the patron or their holds (scrubAudit): the purged patrons' cards,
// full names, emails and phones where another entry's detail names them as a
// whole token (see scrubText), and the patrons' site's actor "opac:<card>".
// No other actor is rewritten: an actor is a member of staff or a service,
// never a patron's data. ids are the entries found naming one when the log was
// read, up to maxID; entries written after are checked again when it is
// applied.
type auditScrub struct {
	needles []string // whole tokens to replace in a detail
	actors  []string // actors to replace ("opac:<card>")
	ids     []int64
	maxID   int64
}

// Minimum lengths below which a purged patron's text is too common to be
// looked for in other people's entries: a full name shorter than
// minNameLen ("Al Li") and a phone with fewer than minPhoneDigits digits
// ("-", "999") would match unrelated entries.
const (
	minNameLen     = 5
	minPhoneDigits = 6
)

// needlesOf is what findAuditText looks for of one patron: the card always
// (bounded by non-alphanumerics), the full name as a whole phrase of at least
// minNameLen characters, the email, and the phone when it has at least
// minPhoneDigits digits.
func needlesOf(card, name, email, phone string) []string {
	var out []string
	if c := strings.TrimSpace(card); c != "" {
		out = append(out, c)
	}
	if n := strings.Join(strings.Fields(name), " "); utf8.RuneCountInString(n) >= minNameLen {
		out = append(out, n)
	}
	if e := strings.TrimSpace(email); strings.Contains(e, "@") {
		out = append(out, e)
	}
	digits := 0
	for _, r := range phone {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	if p := strings.TrimSpace(phone); digits >= minPhoneDigits {
		out = append(out, p)
	}
	return out
}

// findAuditText reads, in tx, the card, full name, email and phone of each
// patron of patronIDs, and the audit entries that name any of them as a whole
// token (candidates): one pass over the whole log, which no index helps with,
// so on a read connection.
func findAuditText(tx *db.Tx, patronIDs []int64) (auditScrub, error) {
	var sc auditScrub
	rows, err := tx.Query(`SELECT card, first_name || ' ' || surname, email, phone FROM patrons
		WHERE id IN (`+idsIn(tx, "?")+`)`, jsonIDs(patronIDs))
	if err != nil {
		return sc, fmt.Errorf("read purged patrons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t [4]string
		if err := rows.Scan(&t[0], &t[1], &t[2], &t[3]); err != nil {
			return sc, err
		}
		sc.needles = append(sc.needles, needlesOf(t[0], t[1], t[2], t[3])...)
		if c := strings.TrimSpace(t[0]); c != "" {
			sc.actors = append(sc.actors, opacActorPrefix+c)
		}
	}
	if err := rows.Err(); err != nil {
		return sc, err
	}
	if err := tx.QueryRow(`SELECT coalesce(max(id), 0) FROM audit_log`).Scan(&sc.maxID); err != nil {
		return sc, err
	}
	if len(sc.needles) == 0 {
		return sc, nil
	}
	cands, err := sc.candidates(tx, `id <= ?`, sc.maxID)
	if err != nil {
		return sc, err
	}
	for _, c := range cands {
		sc.ids = append(sc.ids, c.id)
	}
	return sc, nil
}

// opacActorPrefix is how the patrons' site names its actor: "opac:" and the
// signed-in patron's card (opac.Server's actor).
const opacActorPrefix = "opac:"

// auditRow is one audit entry to rewrite, with its new actor and detail.
type auditRow struct {
	id            int64
	actor, detail string
}

// candidates reads the entries where holds and returns those whose detail
// scrubText changes or whose actor is one of the actors, as they would be
// rewritten. Every entry is read and matched in Go with one regexp: SQL's
// instr(lower(detail), ...) once per needle (30 patrons, some 90 needles) cost
// twice as much on BenchmarkPurge's log, and could not decide whole tokens.
func (sc auditScrub) candidates(tx *db.Tx, where string, arg any) ([]auditRow, error) {
	rows, err := tx.Query(`SELECT id, actor, detail FROM audit_log WHERE `+where, arg)
	if err != nil {
		return nil, fmt.Errorf("search the audit log: %w", err)
	}
	defer rows.Close()
	res := compileNeedles(sc.needles)
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.id, &r.actor, &r.detail); err != nil {
			return nil, err
		}
		detail := scrubText(r.detail, res)
		actor := r.actor
		if slices.Contains(sc.actors, actor) {
			actor = opacActorPrefix + "[purged]"
		}
		if detail != r.detail || actor != r.actor {
			out = append(out, auditRow{r.id, actor, detail})
		}
	}
	return out, rows.Err()
}

// compileNeedles is the needles as one case-insensitive regexp of literals,
// the longest first, compiled once per pass over the candidates: one scan of
// each entry whatever the number of patrons in the chunk.
func compileNeedles(needles []string) *regexp.Regexp {
	sorted := slices.Clone(needles)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	quoted := make([]string, len(sorted))
	for i, n := range sorted {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`(?i)(?:` + strings.Join(quoted, "|") + `)`)
}

// scrubText replaces with "[purged]" each needle (compileNeedles) found in s as
// a whole token, case-insensitively: not preceded nor followed by a letter or
// digit, so that card P001 is not found inside P0012, nor the name "Ann Li"
// inside "Ann Lindqvist". A match that is not a whole token is passed over by
// one character only, so that a needle starting inside it is still found.
func scrubText(s string, re *regexp.Regexp) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos <= len(s) {
		m := re.FindStringIndex(s[pos:])
		if m == nil {
			break
		}
		start, end := pos+m[0], pos+m[1]
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if start > 0 && isWordRune(before) || end < len(s) && isWordRune(after) || end == start {
			_, size := utf8.DecodeRuneInString(s[start:])
			pos = start + max(size, 1)
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString("[purged]")
		last, pos = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// apply rewrites, in tx, the entries found and any written since that name a
// purged patron, each by id: only the entries that change are written.
func (sc auditScrub) apply(tx *db.Tx) error {
	if len(sc.needles) == 0 {
		return nil
	}
	var rows []auditRow
	for _, q := range []struct {
		where string
		arg   any
	}{
		{`id IN (` + idsIn(tx, "?") + `)`, jsonIDs(sc.ids)},
		{`id > ?`, sc.maxID},
	} {
		r, err := sc.candidates(tx, q.where, q.arg)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`UPDATE audit_log SET actor = ?, detail = ? WHERE id = ?`, r.actor, r.detail, r.id); err != nil {
			return fmt.Errorf("scrub the audit log: %w", err)
		}
	}
	return nil
}

// jsonIDs is ids as a JSON array, for idsIn: [] for none (not null, which
// PostgreSQL's json_array_elements_text refuses).
func jsonIDs(ids []int64) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func notFound(err error, id int64) error {
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron %d; they may have been deleted already. Search for the patron again.", id)
	}
	return err
}
