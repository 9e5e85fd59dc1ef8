package privacy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/privacy"
)

func TestExport(t *testing.T) {
	d := mustOpenDemo(t)
	p := richPatron(t, d, "X9400", "Exportova")
	exec(t, d, `UPDATE patrons SET pin_hash = '$2a$10$secretsecretsecretsecret' WHERE id = ?`, p.id)
	desk := stacks.Actor{Name: "desk", StaffID: queryInt(t, d, `SELECT id FROM staff_users WHERE username = 'desk'`)}
	var e *privacy.Export
	err := d.Write(ctx, func(tx *db.Tx) error {
		var err error
		e, err = privacy.ExportByCard(tx, desk, "x9400")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"patron", "loans", "holds", "ledger", "notices", "notice_items", "notice_preferences", "audit"} {
		raw, ok := doc[section]
		if !ok || len(raw) < 5 || string(raw) == "[]" || string(raw) == "null" {
			t.Errorf("section %s is missing or empty: %s", section, raw)
		}
	}
	if e.Patron["card"] != "X9400" || e.Patron["surname"] != "Exportova" || e.Patron["email"] != p.email {
		t.Errorf("patron section %v", e.Patron)
	}
	if strings.Contains(string(b), "pin_hash") || strings.Contains(string(b), "secretsecret") {
		t.Error("the export holds the PIN's hash")
	}
	if len(e.Loans) != 1 || e.Loans[0]["title"] == nil || len(e.Ledger) != 2 || len(e.Audit) < 3 {
		t.Errorf("loans %v, ledger %d rows, audit %d rows", e.Loans, len(e.Ledger), len(e.Audit))
	}
	if n := queryInt(t, d, `SELECT count(*) FROM audit_log WHERE action = 'patron.export' AND object_id = ? AND actor = 'desk' AND `+instr+`(detail, 'X9400') = 0`, p.id); n != 1 {
		t.Errorf("%d audit entries for the export, want 1 naming no card", n)
	}

	t.Run("AnonymisedLoansLeaveIt", func(t *testing.T) {
		if _, err := privacy.Anonymise(ctx, d, dbtest.Monday, privacy.Options{}); err != nil {
			t.Fatal(err)
		}
		err := d.Write(ctx, func(tx *db.Tx) error {
			var err error
			e, err = privacy.ExportPatron(tx, desk, p.id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Loans) != 0 {
			t.Errorf("the export still lists %d anonymised loans", len(e.Loans))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := privacy.ExportByCard(tx, desk, "NOSUCHCARD")
			return err
		})
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("err = %v, want not found", err)
		}
	})
}
