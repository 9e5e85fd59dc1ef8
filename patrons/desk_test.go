package patrons_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// setDeskMessage saves msg as the patron's message for the desk through Update, as
// the edit form does, and returns the patron as every finder reads them.
func setDeskMessage(t *testing.T, d *db.DB, card, msg string) *patrons.Patron {
	t.Helper()
	p := mustFindByCard(t, d, card)
	err := write(d, func(tx *db.Tx) error {
		_, err := patrons.Update(tx, desk, p.ID, patrons.Input{
			Card: p.Card, Surname: p.Surname, FirstName: p.FirstName, Email: p.Email, Phone: p.Phone,
			Address: p.Address, CategoryCode: p.CategoryCode, HomeBranchCode: p.HomeBranchCode, Notes: p.Notes,
			DeskMessage: msg,
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return mustFindByCard(t, d, card)
}

func TestDeskMessage(t *testing.T) {
	d := mustOpenDB(t)

	t.Run("NoneByDefault", func(t *testing.T) {
		if p := mustFindByCard(t, d, "P0001"); p.DeskMessage != "" {
			t.Fatalf("P0001's desk message %q, want none", p.DeskMessage)
		}
	})

	t.Run("SavedTrimmedAndReadByEveryFinder", func(t *testing.T) {
		const want = "Has a parcel waiting."
		p := setDeskMessage(t, d, "P0001", "  "+want+"\n")
		if p.DeskMessage != want {
			t.Fatalf("FindByCard: desk message %q, want %q", p.DeskMessage, want)
		}
		read(t, d, func(tx *db.Tx) error {
			byID, err := patrons.FindByID(tx, p.ID)
			if err != nil {
				return err
			}
			withStanding, _, err := patrons.FindWithStanding(tx, p.ID)
			if err != nil {
				return err
			}
			found, err := patrons.Search(tx, "alex reader", 10)
			if err != nil {
				return err
			}
			if byID.DeskMessage != want || withStanding.DeskMessage != want || len(found) != 1 || found[0].DeskMessage != want {
				t.Errorf("FindByID %q, FindWithStanding %q, Search %v", byID.DeskMessage, withStanding.DeskMessage, found)
			}
			return nil
		})
		if audit := auditRows(t, d, p.ID); len(audit) == 0 || !strings.Contains(audit[len(audit)-1], `desk message "" -> "Has a parcel waiting."`) {
			t.Errorf("audit %q", audit)
		}
	})

	t.Run("ErrTooLong", func(t *testing.T) {
		p := mustFindByCard(t, d, "P0002")
		err := write(d, func(tx *db.Tx) error {
			_, err := patrons.Update(tx, desk, p.ID, patrons.Input{Card: p.Card, Surname: p.Surname, CategoryCode: p.CategoryCode,
				HomeBranchCode: p.HomeBranchCode, DeskMessage: strings.Repeat("x", 501)})
			return err
		})
		wantErr(t, err, stacks.EINVALID, "desk_message", "500")
		if p := mustFindByCard(t, d, "P0002"); p.DeskMessage != "" {
			t.Errorf("a refused message was saved: %q", p.DeskMessage)
		}
	})
}

func TestDismissDeskMessage(t *testing.T) {
	d := mustOpenDB(t)
	dismiss := func(id int64) error {
		return write(d, func(tx *db.Tx) error { return patrons.DismissDeskMessage(tx, desk, id) })
	}
	tests := []struct {
		name      string
		card      string
		message   string // set before dismissing
		wantAudit string // the last audit row after; "" for none added
	}{
		{"OK", "P0003", "Ask for the new address.", "patron.dismiss_desk_message Ask for the new address."},
		{"NothingToDismiss", "P0004", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFindByCard(t, d, tt.card)
			if tt.message != "" {
				p = setDeskMessage(t, d, tt.card, tt.message)
			}
			before := auditRows(t, d, p.ID)
			if err := dismiss(p.ID); err != nil {
				t.Fatal(err)
			}
			if got := mustFindByCard(t, d, tt.card); got.DeskMessage != "" {
				t.Errorf("desk message %q after dismissing", got.DeskMessage)
			}
			after := auditRows(t, d, p.ID)
			switch {
			case tt.wantAudit == "" && len(after) != len(before):
				t.Errorf("audit %q, want no new row", after[len(before):])
			case tt.wantAudit != "" && (len(after) != len(before)+1 || after[len(after)-1] != tt.wantAudit):
				t.Errorf("audit %q, want one new row %q", after[len(before):], tt.wantAudit)
			}
		})
	}

	t.Run("ErrNotFound", func(t *testing.T) {
		if err := dismiss(999999); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("DismissDeskMessage(999999): %v", err)
		}
	})
}

func TestExpiresWithin(t *testing.T) {
	p := patrons.Patron{ExpiresOn: time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{"MoreThan30Days", time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC), false},
		{"Exactly30Days", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), true},
		{"ExpiryDay", time.Date(2026, 12, 30, 9, 0, 0, 0, time.UTC), true},
		{"Expired", time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.ExpiresWithin(tt.now, 30); got != tt.want {
				t.Fatalf("ExpiresWithin(%v, 30) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

func TestIdentify(t *testing.T) {
	d := mustOpenDB(t)
	tests := []struct {
		name      string
		input     string
		limit     int
		wantCard  string // the one patron found
		wantMatch int    // else how many to choose from
		wantMore  bool
		wantCode  string // else the error on field "card"
	}{
		{"Card", "P0003", 10, "P0003", 0, false, ""},
		{"CardAnyCase", " p0003 ", 10, "P0003", 0, false, ""},
		{"OneName", "casey waiting", 10, "P0003", 0, false, ""},
		{"SeveralByCardPrefix", "P000", 20, "", 9, false, ""},
		{"MoreThanLimit", "P000", 3, "", 3, true, ""},
		{"ErrNoMatch", "nobody at all", 10, "", 0, false, stacks.ENOTFOUND},
		{"ErrEmpty", "  ", 10, "", 0, false, stacks.EINVALID},
		{"ErrTooLong", strings.Repeat("a ", 150), 10, "", 0, false, stacks.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read(t, d, func(tx *db.Tx) error {
				got, err := patrons.Identify(tx, tt.input, tt.limit)
				if tt.wantCode != "" {
					wantErr(t, err, tt.wantCode, "card")
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.wantCard != "" && (got.Patron == nil || got.Patron.Card != tt.wantCard || len(got.Matches) != 0):
					t.Errorf("Identify(%q) = %+v, want %s", tt.input, got, tt.wantCard)
				case tt.wantCard == "" && (got.Patron != nil || len(got.Matches) != tt.wantMatch || got.More != tt.wantMore):
					t.Errorf("Identify(%q) = patron %v, %d matches, more %v; want %d matches, more %v",
						tt.input, got.Patron, len(got.Matches), got.More, tt.wantMatch, tt.wantMore)
				}
				return nil
			})
		})
	}
}
