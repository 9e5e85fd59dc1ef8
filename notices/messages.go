package notices

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Filter selects messages for the queue page.
type Filter struct {
	// Status is pending, sent, failed or cancelled; "" for all.
	Status   string
	Delivery string
	PatronID int64
	BranchID int64
	// Limit bounds the list (default 100); Before pages back (ids below it).
	Limit  int
	Before int64
}

const messageColumns = `m.id, m.patron_id, p.first_name || ' ' || p.surname, p.card, m.delivery, m.branch_id, b.name,
	m.library_day, m.to_address, m.subject, m.body_text, m.body_html, m.status, m.attempts, m.next_attempt_at,
	m.last_error, m.created_at, m.sent_at,
	` + messageKinds

// messageKinds lists the triggers of message m's items, each once, in the order
// they were first added. string_agg with ORDER BY runs on SQLite (3.44 on) and
// PostgreSQL alike; SQLite's group_concat(DISTINCT ...) does not run on
// PostgreSQL.
const messageKinds = `(SELECT string_agg(k.trigger, ',' ORDER BY k.first_id) FROM
	(SELECT n.trigger, min(n.id) AS first_id FROM notice_items n WHERE n.message_id = m.id GROUP BY n.trigger) AS k)`

const messageFrom = ` FROM notice_messages m
	JOIN patrons p ON p.id = m.patron_id
	JOIN branches b ON b.id = m.branch_id`

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var next, created db.Time
	var sent db.NullTime
	var kinds sql.NullString
	err := row.Scan(&m.ID, &m.PatronID, &m.PatronName, &m.PatronCard, &m.Delivery, &m.BranchID, &m.BranchName,
		&m.Day, &m.To, &m.Subject, &m.Text, &m.HTML, &m.Status, &m.Attempts, &next,
		&m.LastError, &created, &sent, &kinds)
	if err != nil {
		return Message{}, err
	}
	m.PatronName = strings.TrimSpace(m.PatronName)
	m.NextAttemptAt, m.CreatedAt, m.SentAt = next.Time, created.Time, sent.Time
	if kinds.String != "" {
		m.Kinds = strings.Split(kinds.String, ",")
	}
	return m, nil
}

// listMessages returns the messages f selects, newest first, in one query.
func listMessages(tx *db.Tx, f Filter) ([]Message, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where, args = append(where, "m.status = ?"), append(args, f.Status)
	}
	if f.Delivery != "" {
		where, args = append(where, "m.delivery = ?"), append(args, f.Delivery)
	}
	if f.PatronID != 0 {
		where, args = append(where, "m.patron_id = ?"), append(args, f.PatronID)
	}
	if f.BranchID != 0 {
		where, args = append(where, "m.branch_id = ?"), append(args, f.BranchID)
	}
	if f.Before != 0 {
		where, args = append(where, "m.id < ?"), append(args, f.Before)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q := `SELECT ` + messageColumns + messageFrom
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY m.id DESC LIMIT ?`
	rows, err := tx.Query(q, append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list notices: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Counts are the queue's messages by status.
type Counts struct{ Pending, Sent, Failed, Cancelled int }

// countMessages counts the queue by status, in one query.
func countMessages(tx *db.Tx) (Counts, error) {
	var c Counts
	err := tx.QueryRow(`SELECT
		coalesce(sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), 0),
		coalesce(sum(CASE WHEN status = 'sent' THEN 1 ELSE 0 END), 0),
		coalesce(sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0),
		coalesce(sum(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END), 0)
		FROM notice_messages`).Scan(&c.Pending, &c.Sent, &c.Failed, &c.Cancelled)
	if err != nil {
		return c, fmt.Errorf("count notices: %w", err)
	}
	return c, nil
}

// findMessage returns one message.
func findMessage(tx *db.Tx, id int64) (Message, error) {
	m, err := scanMessage(tx.QueryRow(`SELECT `+messageColumns+messageFrom+` WHERE m.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, stacks.Errorf(stacks.ENOTFOUND, "There is no notice %d.", id)
	} else if err != nil {
		return Message{}, fmt.Errorf("find notice %d: %w", id, err)
	}
	return m, nil
}

// resend puts a message back in the queue to go out at once: a failed one after
// the relay is fixed, a sent one the patron says never came, a printed one to
// print again. The email goes to the patron's address of today. A cancelled
// message is not resent: it was no longer needed, or too old, when its turn came.
func resend(tx *db.Tx, actor stacks.Actor, id int64) error {
	var status string
	err := tx.QueryRow(`SELECT status FROM notice_messages WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no notice %d.", id)
	} else if err != nil {
		return fmt.Errorf("resend notice %d: %w", id, err)
	}
	if status == StatusCancelled {
		return stacks.Errorf(stacks.ECONFLICT, "Notice %d was not sent because it was no longer needed when its turn came; it cannot be resent.", id)
	}
	_, err = tx.Exec(`UPDATE notice_messages SET status = 'pending', attempts = 0, next_attempt_at = ?, resent_at = ?, last_error = '',
			to_address = CASE WHEN delivery = 'email'
				THEN coalesce((SELECT CASE WHEN p.email <> '' THEN p.email END FROM patrons p WHERE p.id = notice_messages.patron_id), to_address)
				ELSE to_address END
		WHERE id = ?`, db.FormatTime(tx.Now()), db.FormatTime(tx.Now()), id)
	if err != nil {
		return fmt.Errorf("resend notice %d: %w", id, err)
	}
	return tx.Audit(actor, "notices.resend", "notice", id, "")
}

// resendFailed puts every failed message back in the queue at once, as resend
// does one: after the relay or its password is fixed. It returns how many.
func resendFailed(tx *db.Tx, actor stacks.Actor) (int, error) {
	res, err := tx.Exec(`UPDATE notice_messages SET status = 'pending', attempts = 0, next_attempt_at = ?, resent_at = ?, last_error = '',
			to_address = CASE WHEN delivery = 'email'
				THEN coalesce((SELECT CASE WHEN p.email <> '' THEN p.email END FROM patrons p WHERE p.id = notice_messages.patron_id), to_address)
				ELSE to_address END
		WHERE status = 'failed'`, db.FormatTime(tx.Now()), db.FormatTime(tx.Now()))
	if err != nil {
		return 0, fmt.Errorf("resend failed notices: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return 0, nil
	}
	return int(n), tx.Audit(actor, "notices.resend_failed", "notice", 0, fmt.Sprintf("%d notices", n))
}

// markPrinted marks printed notices of a branch's batch as sent: staff printed
// them and put them in the post. Only pending printed notices of that branch
// change; it returns how many did.
func markPrinted(tx *db.Tx, actor stacks.Actor, branchID int64, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q, args := inList(`UPDATE notice_messages SET status = 'sent', sent_at = ?, attempts = attempts + 1
		WHERE delivery = 'print' AND status = 'pending' AND branch_id = ? AND id IN `, ids, db.FormatTime(tx.Now()), branchID)
	res, err := tx.Exec(q, args...)
	if err != nil {
		return 0, fmt.Errorf("mark notices printed: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		if err := tx.Audit(actor, "notices.printed", "branch", branchID, fmt.Sprintf("%d notices", n)); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// printBatch returns a branch's printed notices waiting to be printed, oldest
// first (at most 1000), in one query.
func printBatch(tx *db.Tx, branchID int64) ([]Message, error) {
	rows, err := tx.Query(`SELECT `+messageColumns+messageFrom+`
		WHERE m.delivery = 'print' AND m.status = 'pending' AND m.branch_id = ?
		ORDER BY m.id LIMIT 1000`, branchID)
	if err != nil {
		return nil, fmt.Errorf("print batch: %w", err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// patronAddresses are the postal addresses printed notices go to, by patron, a
// few hundred per query.
func patronAddresses(tx *db.Tx, patronIDs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	for start := 0; start < len(patronIDs); start += 500 {
		q, args := inList(`SELECT id, address FROM patrons WHERE id IN `, patronIDs[start:min(start+500, len(patronIDs))])
		rows, err := tx.Query(q, args...)
		if err != nil {
			return nil, fmt.Errorf("patron addresses: %w", err)
		}
		for rows.Next() {
			var id int64
			var a string
			if err := rows.Scan(&id, &a); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Run is one daily run in the log.
type Run struct {
	Day        string
	StartedAt  db.NullTime
	FinishedAt db.NullTime
	Items      int
	Messages   int
}

// recentRuns returns the last n runs, newest first.
func recentRuns(tx *db.Tx, n int) ([]Run, error) {
	rows, err := tx.Query(`SELECT library_day, started_at, finished_at, items, messages FROM notice_runs ORDER BY library_day DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("notice runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.Day, &r.StartedAt, &r.FinishedAt, &r.Items, &r.Messages); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
