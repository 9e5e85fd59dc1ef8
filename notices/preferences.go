package notices

import (
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Preference is a patron's delivery for one kind of notice.
type Preference struct {
	Kind     string
	Label    string
	Delivery string
	// Default: the patron never chose; Delivery is the default.
	Default bool
}

// DefaultDelivery is the delivery of a patron who never chose: email when there
// is an address to send to, else print.
func DefaultDelivery(email string) string {
	if strings.TrimSpace(email) != "" {
		return DeliveryEmail
	}
	return DeliveryPrint
}

// ValidDelivery reports whether s is a delivery a patron can choose.
func ValidDelivery(s string) bool {
	return s == DeliveryEmail || s == DeliveryPrint || s == DeliveryNone
}

// SetPatronPreferences stores the patron's choices (kind to delivery). Choosing
// email for a patron without an address is refused: nothing could be sent.
func SetPatronPreferences(tx *db.Tx, actor stacks.Actor, patronID int64, email string, choices map[string]string) error {
	var changed []string
	for _, k := range Kinds {
		v, ok := choices[k.Trigger]
		if !ok {
			continue
		}
		if !ValidDelivery(v) {
			return stacks.FieldErrorf("notice_"+k.Trigger, stacks.EINVALID, "Choose email, print or none for %q.", k.Label)
		}
		if v == DeliveryEmail && strings.TrimSpace(email) == "" {
			return stacks.FieldErrorf("notice_"+k.Trigger, stacks.EINVALID, "%s by email needs the patron's email address: add it above, or choose print.", k.Label)
		}
		res, err := tx.Exec(`INSERT INTO notice_preferences (patron_id, kind, delivery) VALUES (?, ?, ?)
			ON CONFLICT (patron_id, kind) DO UPDATE SET delivery = excluded.delivery
			WHERE notice_preferences.delivery <> excluded.delivery`, patronID, k.Trigger, v)
		if err != nil {
			return fmt.Errorf("save notice preference: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			changed = append(changed, k.Trigger+"="+v)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return tx.Audit(actor, "notices.preferences", "patron", patronID, strings.Join(changed, ", "))
}

// PatronNotices is what the patron page shows about notices: the patron's
// choices and the latest messages.
type PatronNotices struct {
	Preferences []Preference
	// Messages are the latest, newest first, without their bodies.
	Messages []Message
}

// FindPatronNotices reads the patron's notice choices and latest limit messages
// in one statement (the patron page counts its statements).
func FindPatronNotices(tx *db.Tx, patronID int64, email string, limit int) (PatronNotices, error) {
	rows, err := tx.Query(`SELECT 0, 0, kind, delivery, '', '', '', 0, '', '', ''
			FROM notice_preferences WHERE patron_id = ?1
		UNION ALL
		SELECT * FROM (SELECT 1, m.id, m.delivery, m.status, m.subject, m.library_day, m.created_at, m.attempts,
				coalesce(m.sent_at, ''), m.last_error,
				coalesce(`+messageKinds+`, '')
			FROM notice_messages m WHERE m.patron_id = ?1 ORDER BY m.id DESC LIMIT ?2) AS recent`, patronID, limit)
	if err != nil {
		return PatronNotices{}, fmt.Errorf("read patron notices: %w", err)
	}
	defer rows.Close()
	chosen := map[string]string{}
	var out PatronNotices
	for rows.Next() {
		var isMsg int
		var m Message
		var a, b, created, sent, kinds string
		if err := rows.Scan(&isMsg, &m.ID, &a, &b, &m.Subject, &m.Day, &created, &m.Attempts, &sent, &m.LastError, &kinds); err != nil {
			return PatronNotices{}, err
		}
		if isMsg == 0 {
			chosen[a] = b
			continue
		}
		m.PatronID, m.Delivery, m.Status = patronID, a, b
		m.CreatedAt, _ = db.ParseTime(created)
		if sent != "" {
			m.SentAt, _ = db.ParseTime(sent)
		}
		if kinds != "" {
			m.Kinds = strings.Split(kinds, ",")
		}
		out.Messages = append(out.Messages, m)
	}
	if err := rows.Err(); err != nil {
		return PatronNotices{}, err
	}
	for _, k := range Kinds {
		p := Preference{Kind: k.Trigger, Label: k.Label, Delivery: chosen[k.Trigger]}
		if p.Delivery == "" {
			p.Delivery, p.Default = DefaultDelivery(email), true
		}
		out.Preferences = append(out.Preferences, p)
	}
	return out, nil
}
