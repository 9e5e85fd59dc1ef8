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

// PatronPreferences returns the patron's delivery for every kind, in Kinds order.
// One query.
func PatronPreferences(tx *db.Tx, patronID int64, email string) ([]Preference, error) {
	rows, err := tx.Query(`SELECT kind, delivery FROM notice_preferences WHERE patron_id = ?`, patronID)
	if err != nil {
		return nil, fmt.Errorf("read notice preferences: %w", err)
	}
	defer rows.Close()
	chosen := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		chosen[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Preference, 0, len(Kinds))
	for _, k := range Kinds {
		p := Preference{Kind: k.Trigger, Label: k.Label, Delivery: chosen[k.Trigger]}
		if p.Delivery == "" {
			p.Delivery, p.Default = DefaultDelivery(email), true
		}
		out = append(out, p)
	}
	return out, nil
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
