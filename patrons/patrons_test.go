package patrons_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

func TestMain(m *testing.M) {
	// The demo's staff accounts need password hashes; bcrypt at its real cost is
	// slow under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

// testNow is a Monday morning, the day the demo library is created.
var testNow = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// desk is the actor of the tests' writes: the demo's desk account has id 1.
var desk = stacks.Actor{StaffID: 1, Name: "desk", BranchID: 1}

// mustOpenDB opens a migrated database in a file under tb.TempDir(), fills it with a
// small demo library (fixture patrons P0001-P0005 among 20) and stops its clock at
// testNow; tests move d.Now to change "today".
func mustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	return demotest.Demo(tb, demo.Options{Titles: 50, Patrons: 20}, testNow, db.Options{})
}

func read(tb testing.TB, d *db.DB, fn func(*db.Tx) error) {
	tb.Helper()
	if err := d.Read(context.Background(), fn); err != nil {
		tb.Fatal(err)
	}
}

func write(d *db.DB, fn func(*db.Tx) error) error {
	return d.Write(context.Background(), fn)
}

// pay takes a cash payment at the desk with a note, on the oldest lines first.
func pay(tx *db.Tx, patronID, cents int64, note string) error {
	_, err := patrons.PayLines(tx, desk, patrons.PayRequest{PatronID: patronID, Cents: cents, Method: patrons.MethodCash, Note: note})
	return err
}

// waiveOldest waives cents at the desk on all the patron's open lines, oldest
// first.
func waiveOldest(tx *db.Tx, patronID, cents int64, reason string) error {
	open, _, err := patrons.OpenCharges(tx, patronID)
	if err != nil {
		return err
	}
	ids := make([]int64, len(open))
	for i, c := range open {
		ids[i] = c.ID
	}
	_, _, err = patrons.WaiveLines(tx, desk, patrons.WaiveRequest{PatronID: patronID, ChargeIDs: ids, Cents: cents, Reason: reason})
	return err
}

// setPIN sets the patron's PIN at the desk, hashing it in the transaction.
func setPIN(tx *db.Tx, patronID int64, pin string) error {
	hash, err := patrons.HashPIN(pin)
	if err != nil {
		return err
	}
	return patrons.SetPINHash(tx, desk, patronID, hash)
}

func mustFindByCard(tb testing.TB, d *db.DB, card string) *patrons.Patron {
	tb.Helper()
	var p *patrons.Patron
	read(tb, d, func(tx *db.Tx) (err error) {
		p, err = patrons.FindByCard(tx, card)
		return err
	})
	return p
}

func mustExec(tb testing.TB, d *db.DB, query string, args ...any) {
	tb.Helper()
	if err := write(d, func(tx *db.Tx) error { _, err := tx.Exec(query, args...); return err }); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// wantErr fails unless err is a *stacks.Error with the code and field, whose message
// contains every one of words.
func wantErr(tb testing.TB, err error, code, field string, words ...string) {
	tb.Helper()
	var se *stacks.Error
	if !errors.As(err, &se) {
		tb.Fatalf("error %v, want a %s error", err, code)
	}
	if se.Code != code || se.Field != field {
		tb.Fatalf("error code %q field %q (%s), want code %q field %q", se.Code, se.Field, se.Message, code, field)
	}
	for _, w := range words {
		if !strings.Contains(se.Message, w) {
			tb.Errorf("message %q does not contain %q", se.Message, w)
		}
	}
}

// auditRows returns the audit log's "action detail" lines for a patron, oldest first.
func auditRows(tb testing.TB, d *db.DB, patronID int64) []string {
	tb.Helper()
	var out []string
	read(tb, d, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT action, actor, coalesce(staff_id, 0), detail FROM audit_log
			WHERE object_type = 'patron' AND object_id = ? ORDER BY id`, patronID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var action, actor, detail string
			var staffID int64
			if err := rows.Scan(&action, &actor, &staffID, &detail); err != nil {
				return err
			}
			if actor != desk.Name || staffID != desk.StaffID {
				tb.Errorf("audit %s by %q (staff %d), want the desk account", action, actor, staffID)
			}
			out = append(out, action+" "+detail)
		}
		return rows.Err()
	})
	return out
}

func validInput() patrons.Input {
	return patrons.Input{
		Card: "P9001", Surname: "Newcomer", FirstName: "Noor", Email: "noor@example.org",
		Phone: "555-0199", Address: "1 New Street", CategoryCode: "ADULT", HomeBranchCode: "CEN",
	}
}

func TestInputValidate(t *testing.T) {
	long := strings.Repeat("x", 101)
	tests := []struct {
		name  string
		edit  func(*patrons.Input)
		field string // "" for valid
	}{
		{"OK", func(*patrons.Input) {}, ""},
		{"OKMinimal", func(in *patrons.Input) { in.FirstName, in.Email, in.Phone, in.Address = "", "", "", "" }, ""},
		{"OKHyphenatedCard", func(in *patrons.Input) { in.Card = "lib-2026-17" }, ""},
		{"OKSpacesTrimmed", func(in *patrons.Input) { in.Card, in.Surname = "  P9001 ", " Newcomer " }, ""},
		{"ErrCardMissing", func(in *patrons.Input) { in.Card = "  " }, "card"},
		{"ErrCardSpace", func(in *patrons.Input) { in.Card = "P 9001" }, "card"},
		{"ErrCardPunctuation", func(in *patrons.Input) { in.Card = "P9001;" }, "card"},
		{"ErrCardTooLong", func(in *patrons.Input) { in.Card = strings.Repeat("9", 33) }, "card"},
		{"ErrCardNotASCII", func(in *patrons.Input) { in.Card = "PÉ001" }, "card"},
		{"ErrSurnameMissing", func(in *patrons.Input) { in.Surname = "" }, "surname"},
		{"ErrSurnameTooLong", func(in *patrons.Input) { in.Surname = long }, "surname"},
		{"ErrSurnameLineBreak", func(in *patrons.Input) { in.Surname = "New\ncomer" }, "surname"},
		{"ErrFirstNameTooLong", func(in *patrons.Input) { in.FirstName = long }, "first_name"},
		{"ErrEmailNoAt", func(in *patrons.Input) { in.Email = "noor.example.org" }, "email"},
		{"ErrEmailSpace", func(in *patrons.Input) { in.Email = "noor @example.org" }, "email"},
		{"ErrPhoneTooLong", func(in *patrons.Input) { in.Phone = strings.Repeat("5", 41) }, "phone"},
		{"ErrAddressTooLong", func(in *patrons.Input) { in.Address = strings.Repeat("a", 501) }, "address"},
		{"ErrCategoryMissing", func(in *patrons.Input) { in.CategoryCode = "" }, "category"},
		{"ErrBranchMissing", func(in *patrons.Input) { in.HomeBranchCode = "" }, "home_branch"},
		{"ErrNotesTooLong", func(in *patrons.Input) { in.Notes = strings.Repeat("n", 2001) }, "notes"},
		{"ErrInvalidUTF8", func(in *patrons.Input) { in.Surname = "New\xffcomer" }, "surname"},
		{"ErrInvalidUTF8Notes", func(in *patrons.Input) { in.Notes = "\xc3" }, "notes"},
		{"OKDeskMessage", func(in *patrons.Input) { in.DeskMessage = "Has a parcel waiting.\nAsk for the new address." }, ""},
		{"ErrDeskMessageTooLong", func(in *patrons.Input) { in.DeskMessage = strings.Repeat("m", 501) }, "desk_message"},
		{"ErrDeskMessageControl", func(in *patrons.Input) { in.DeskMessage = "a\x00b" }, "desk_message"},
		{"ErrDeskMessageInvalidUTF8", func(in *patrons.Input) { in.DeskMessage = "\xff" }, "desk_message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := validInput()
			tt.edit(&in)
			err := in.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			wantErr(t, err, stacks.EINVALID, tt.field)
		})
	}

	t.Run("Normalizes", func(t *testing.T) {
		in := patrons.Input{Card: " p9001 ", Surname: " Newcomer ", CategoryCode: "adult", HomeBranchCode: " cen", DeskMessage: "  Has a parcel waiting.\n "}
		if err := in.Validate(); err != nil {
			t.Fatal(err)
		}
		if in.Card != "P9001" || in.Surname != "Newcomer" || in.CategoryCode != "ADULT" || in.HomeBranchCode != "CEN" || in.DeskMessage != "Has a parcel waiting." {
			t.Fatalf("normalized to %+v", in)
		}
	})
}

func TestExpired(t *testing.T) {
	p := patrons.Patron{ExpiresOn: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Skip(err)
	}
	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{"DayBefore", time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC), false},
		{"ExpiryDayMorning", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), false},
		{"ExpiryDayEvening", time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC), false},
		{"DayAfter", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true},
		// 11:30 UTC on the expiry day is already the next day in Auckland.
		{"LocalDateCounts", time.Date(2026, 11, 30, 11, 30, 0, 0, time.UTC).In(auckland), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Expired(tt.now); got != tt.want {
				t.Fatalf("Expired(%v) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	d := mustOpenDB(t)

	t.Run("ByCard", func(t *testing.T) {
		for _, card := range []string{"P0001", " p0001\n"} {
			p := mustFindByCard(t, d, card)
			if p.Card != "P0001" || p.Name() != "Alex Reader" || p.SortName() != "Reader, Alex" {
				t.Fatalf("FindByCard(%q) = %s %q", card, p.Card, p.Name())
			}
			if p.CategoryCode != "ADULT" || p.CategoryName != "Adult" || p.HomeBranchCode != "CEN" || p.HomeBranchName != "Central" {
				t.Errorf("category %s %s, branch %s %s", p.CategoryCode, p.CategoryName, p.HomeBranchCode, p.HomeBranchName)
			}
			if p.Email != "alex.reader@example.org" || p.ExpiresOn != time.Date(2028, 11, 30, 0, 0, 0, 0, time.UTC) || p.Expired(testNow) {
				t.Errorf("email %q, expires %v", p.Email, p.ExpiresOn)
			}
		}
	})

	t.Run("Fixtures", func(t *testing.T) {
		if p := mustFindByCard(t, d, "P0004"); !p.Expired(testNow) {
			t.Errorf("P0004 expires %v: not expired", p.ExpiresOn)
		}
		if p := mustFindByCard(t, d, "P0005"); !p.Blocked || !strings.Contains(p.BlockNote, "damage") {
			t.Errorf("P0005 blocked %v note %q", p.Blocked, p.BlockNote)
		}
	})

	t.Run("ByID", func(t *testing.T) {
		want := mustFindByCard(t, d, "P0003")
		read(t, d, func(tx *db.Tx) error {
			p, err := patrons.FindByID(tx, want.ID)
			if err != nil {
				return err
			}
			if *p != *want {
				t.Errorf("FindByID = %+v, want %+v", p, want)
			}
			return nil
		})
	})

	t.Run("ByIDs", func(t *testing.T) {
		a, b := mustFindByCard(t, d, "P0001"), mustFindByCard(t, d, "P0003")
		read(t, d, func(tx *db.Tx) error {
			got, err := patrons.FindByIDs(tx, []int64{a.ID, 999999, b.ID})
			if err != nil {
				return err
			}
			if len(got) != 2 || *got[a.ID] != *a || *got[b.ID] != *b {
				t.Errorf("FindByIDs = %v, want P0001 and P0003 only", got)
			}
			if got, err := patrons.FindByIDs(tx, nil); err != nil || len(got) != 0 {
				t.Errorf("FindByIDs(nil) = %v, %v", got, err)
			}
			return nil
		})
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		read(t, d, func(tx *db.Tx) error {
			_, err := patrons.FindByCard(tx, "X9999")
			wantErr(t, err, stacks.ENOTFOUND, "card", `"X9999"`, "search by name")
			_, err = patrons.FindByID(tx, 999999)
			if stacks.ErrorCode(err) != stacks.ENOTFOUND {
				t.Errorf("FindByID(999999): %v", err)
			}
			_, err = patrons.FindByCard(tx, "  ")
			wantErr(t, err, stacks.EINVALID, "card")
			return nil
		})
	})
}

func TestSearch(t *testing.T) {
	d := mustOpenDB(t)
	search := func(q string, limit int) []string {
		t.Helper()
		var out []string
		read(t, d, func(tx *db.Tx) error {
			ps, err := patrons.Search(tx, q, limit)
			for _, p := range ps {
				out = append(out, p.Card+" "+p.Name())
			}
			return err
		})
		return out
	}
	tests := []struct {
		name, q string
		limit   int
		want    []string // a prefix of the results; nil for none
	}{
		{"Surname", "reader", 10, []string{"P0001 Alex Reader"}},
		{"FirstAndSurname", "Alex Reader", 10, []string{"P0001 Alex Reader"}},
		{"Prefixes", "ale rea", 10, []string{"P0001 Alex Reader"}},
		{"SurnameFirstOrder", "reader alex", 10, []string{"P0001 Alex Reader"}},
		{"ExactCard", "p0002", 10, []string{"P0002 Blake Owing"}},
		{"Empty", "   ", 10, nil},
		{"NoMatch", "zzzz", 10, nil},
		{"WildcardsAreLiteral", "%", 10, nil},
		{"UnderscoreIsLiteral", "_", 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search(tt.q, tt.limit)
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("Search(%q) = %v, want nothing", tt.q, got)
				}
				return
			}
			if len(got) < len(tt.want) || strings.Join(got[:len(tt.want)], "|") != strings.Join(tt.want, "|") {
				t.Fatalf("Search(%q) = %v, want first %v", tt.q, got, tt.want)
			}
		})
	}

	t.Run("CardPrefixSortedByName", func(t *testing.T) {
		var ps []patrons.Patron
		read(t, d, func(tx *db.Tx) (err error) { ps, err = patrons.Search(tx, "p000", 20); return err })
		if len(ps) != 9 {
			t.Fatalf("Search(p000) found %d patrons, want P0001-P0009", len(ps))
		}
		for i, p := range ps {
			if !strings.HasPrefix(p.Card, "P000") {
				t.Errorf("Search(p000) found %s", p.Card)
			}
			if i > 0 && p.SortName() < ps[i-1].SortName() {
				t.Errorf("%q sorts after %q", ps[i-1].SortName(), p.SortName())
			}
		}
	})

	t.Run("Limit", func(t *testing.T) {
		if got := search("P", 3); len(got) != 3 {
			t.Fatalf("Search(P, 3) returned %d", len(got))
		}
	})
}

func TestListCategories(t *testing.T) {
	d := mustOpenDB(t)
	read(t, d, func(tx *db.Tx) error {
		cs, err := patrons.ListCategories(tx)
		if err != nil {
			return err
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Code)
			if c.CardMonths != 12 || c.MaxHolds == 0 {
				t.Errorf("category %+v", c)
			}
		}
		if strings.Join(got, " ") != "ADULT CHILD STAFF" {
			t.Fatalf("categories %v", got)
		}
		return nil
	})
}

func TestCreate(t *testing.T) {
	d := mustOpenDB(t)

	t.Run("OK", func(t *testing.T) {
		var p *patrons.Patron
		err := write(d, func(tx *db.Tx) (err error) {
			in := validInput()
			in.Card, in.CategoryCode, in.HomeBranchCode = "p9001", "child", "eas"
			p, err = patrons.Create(tx, desk, in)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID == 0 || p.Card != "P9001" || p.Name() != "Noor Newcomer" || p.CategoryCode != "CHILD" || p.HomeBranchName != "Eastside" {
			t.Fatalf("created %+v", p)
		}
		if want := time.Date(2027, 11, 30, 0, 0, 0, 0, time.UTC); p.ExpiresOn != want {
			t.Errorf("expires %v, want %v (today + 12 months)", p.ExpiresOn, want)
		}
		if !p.CreatedAt.Equal(testNow) || p.Blocked {
			t.Errorf("created at %v, blocked %v", p.CreatedAt, p.Blocked)
		}
		if got := mustFindByCard(t, d, "P9001"); got.ID != p.ID {
			t.Errorf("FindByCard after create: %+v", got)
		}
		audit := auditRows(t, d, p.ID)
		if len(audit) != 1 || !strings.HasPrefix(audit[0], "patron.create card P9001") {
			t.Errorf("audit %q", audit)
		}
	})

	t.Run("ErrCardInUse", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error {
			in := validInput()
			in.Card = "p0001"
			_, err := patrons.Create(tx, desk, in)
			return err
		})
		wantErr(t, err, stacks.ECONFLICT, "card", "P0001", "in use")
	})

	t.Run("ErrUnknownCategory", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error {
			in := validInput()
			in.Card, in.CategoryCode = "P9002", "ALIEN"
			_, err := patrons.Create(tx, desk, in)
			return err
		})
		wantErr(t, err, stacks.EINVALID, "category", "ALIEN")
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error {
			in := validInput()
			in.Card, in.HomeBranchCode = "P9002", "MARS"
			_, err := patrons.Create(tx, desk, in)
			return err
		})
		wantErr(t, err, stacks.EINVALID, "home_branch", "MARS")
	})

	t.Run("ExpiryInLibraryTimeZone", func(t *testing.T) {
		// 13:00 UTC on 30 November is already 1 December in Auckland.
		mustExec(t, d, `UPDATE preferences SET value = 'Pacific/Auckland' WHERE name = 'timezone'`)
		defer mustExec(t, d, `UPDATE preferences SET value = 'UTC' WHERE name = 'timezone'`)
		d.Now = func() time.Time { return testNow.Add(3 * time.Hour) }
		defer func() { d.Now = func() time.Time { return testNow } }()
		var p *patrons.Patron
		err := write(d, func(tx *db.Tx) (err error) {
			in := validInput()
			in.Card = "P9003"
			p, err = patrons.Create(tx, desk, in)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC); p.ExpiresOn != want {
			t.Errorf("expires %v, want %v", p.ExpiresOn, want)
		}
	})
}

func TestUpdate(t *testing.T) {
	d := mustOpenDB(t)
	p := mustFindByCard(t, d, "P0003")

	t.Run("OK", func(t *testing.T) {
		var got *patrons.Patron
		err := write(d, func(tx *db.Tx) (err error) {
			got, err = patrons.Update(tx, desk, p.ID, patrons.Input{
				Card: p.Card, Surname: "Waiting-Long", FirstName: p.FirstName, Email: "casey@example.net",
				Phone: p.Phone, Address: p.Address, CategoryCode: "STAFF", HomeBranchCode: "WES", Notes: "Prefers e-mail.",
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Surname != "Waiting-Long" || got.Email != "casey@example.net" || got.CategoryCode != "STAFF" ||
			got.HomeBranchCode != "WES" || got.Notes != "Prefers e-mail." {
			t.Fatalf("updated %+v", got)
		}
		if got.ExpiresOn != p.ExpiresOn || got.CreatedAt != p.CreatedAt {
			t.Errorf("update changed expiry or creation: %+v", got)
		}
		audit := auditRows(t, d, p.ID)
		if len(audit) != 1 || !strings.Contains(audit[0], `surname "Waiting" -> "Waiting-Long"`) ||
			!strings.Contains(audit[0], `category "ADULT" -> "STAFF"`) || strings.Contains(audit[0], "phone") {
			t.Errorf("audit %q", audit)
		}
		// Hyphenated surnames are found by each part.
		read(t, d, func(tx *db.Tx) error {
			ps, err := patrons.Search(tx, "casey long", 10)
			if err != nil || len(ps) != 1 || ps[0].ID != p.ID {
				t.Errorf("Search(casey long) = %v, %v", ps, err)
			}
			return nil
		})
	})

	t.Run("ErrCardInUse", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error {
			_, err := patrons.Update(tx, desk, p.ID, patrons.Input{Card: "P0001", Surname: "Waiting", CategoryCode: "ADULT", HomeBranchCode: "CEN"})
			return err
		})
		wantErr(t, err, stacks.ECONFLICT, "card", "in use")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error {
			_, err := patrons.Update(tx, desk, 999999, validInput())
			return err
		})
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("Update(999999): %v", err)
		}
	})
}

// TestRenewCard: a card is extended by its category's card validity from the later
// of its expiry and today, today being the date the caller passes (the library's
// local date); each renewal is audited.
func TestRenewCard(t *testing.T) {
	d := mustOpenDB(t)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Skip(err)
	}
	tests := []struct {
		name     string
		card     string
		category string // its card validity is set to months
		months   int
		expires  string // the stored expiry before renewing
		today    time.Time
		want     time.Time
	}{
		{"ExpiredCardFromToday", "P0004", "ADULT", 12, "2026-10-01", testNow, day(2027, 11, 30)},
		{"ValidCardFromExpiry", "P0001", "ADULT", 12, "2028-11-30", testNow, day(2029, 11, 30)},
		{"ExpiresTodayFromToday", "P0002", "ADULT", 12, "2026-11-30", testNow, day(2027, 11, 30)},
		{"CategoryPeriodValid", "P0003", "CHILD", 6, "2026-12-15", testNow, day(2027, 6, 15)},
		{"CategoryPeriodExpired", "P0006", "STAFF", 36, "2025-01-31", testNow, day(2029, 11, 30)},
		{"MonthEndClamped", "P0007", "CHILD", 1, "2027-01-31", testNow, day(2027, 2, 28)},
		{"LeapDay", "P0008", "ADULT", 12, "2028-02-29", testNow, day(2029, 2, 28)},
		// 20:00 UTC on 30 November is already 1 December in Auckland.
		{"TodayIsTheLibrarysDate", "P0009", "ADULT", 12, "2026-11-30", time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC).In(auckland), day(2027, 12, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustExec(t, d, `UPDATE patron_categories SET card_months = ? WHERE code = ?`, tt.months, tt.category)
			mustExec(t, d, `UPDATE patrons SET expires_on = ?, category_id = (SELECT id FROM patron_categories WHERE code = ?) WHERE card = ?`,
				tt.expires, tt.category, tt.card)
			id := mustFindByCard(t, d, tt.card).ID
			var got time.Time
			err := write(d, func(tx *db.Tx) (err error) {
				got, err = patrons.RenewCard(tx, desk, id, tt.today)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Fatalf("RenewCard = %v, want %v", got, tt.want)
			}
			if p := mustFindByCard(t, d, tt.card); !p.ExpiresOn.Equal(tt.want) || p.Expired(tt.today) {
				t.Errorf("stored expiry %v, want %v", p.ExpiresOn, tt.want)
			}
			audit := auditRows(t, d, id)
			if want := "patron.renew_card expiry " + tt.expires + " -> " + tt.want.Format(db.DayFormat); len(audit) == 0 || audit[len(audit)-1] != want {
				t.Errorf("audit %q, want last %q", audit, want)
			}
		})
	}

	t.Run("ErrNotFound", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error { _, err := patrons.RenewCard(tx, desk, 999999, testNow); return err })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("RenewCard(999999): %v", err)
		}
	})
}

func TestSetBlock(t *testing.T) {
	d := mustOpenDB(t)
	id := mustFindByCard(t, d, "P0001").ID
	setBlock := func(blocked bool, note string) error {
		return write(d, func(tx *db.Tx) error { return patrons.SetBlock(tx, desk, id, blocked, note) })
	}

	t.Run("ErrNoteRequired", func(t *testing.T) {
		wantErr(t, setBlock(true, "  "), stacks.EINVALID, "note", "why")
		if p := mustFindByCard(t, d, "P0001"); p.Blocked {
			t.Fatal("blocked without a note")
		}
	})

	t.Run("Block", func(t *testing.T) {
		if err := setBlock(true, " Lost two items; call before lending. "); err != nil {
			t.Fatal(err)
		}
		if p := mustFindByCard(t, d, "P0001"); !p.Blocked || p.BlockNote != "Lost two items; call before lending." {
			t.Fatalf("blocked %v note %q", p.Blocked, p.BlockNote)
		}
	})

	t.Run("Unblock", func(t *testing.T) {
		if err := setBlock(false, "Items found."); err != nil {
			t.Fatal(err)
		}
		if p := mustFindByCard(t, d, "P0001"); p.Blocked || p.BlockNote != "" {
			t.Fatalf("blocked %v note %q", p.Blocked, p.BlockNote)
		}
		audit := auditRows(t, d, id)
		want := []string{"patron.block Lost two items; call before lending.", "patron.unblock Items found."}
		if strings.Join(audit, "|") != strings.Join(want, "|") {
			t.Errorf("audit %q, want %q", audit, want)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error { return patrons.SetBlock(tx, desk, 999999, true, "x") })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("SetBlock(999999): %v", err)
		}
	})
}

func TestLedger(t *testing.T) {
	d := mustOpenDB(t)
	// The desk account may waive here (TestWaiveLines checks the permission).
	mustExec(t, d, `UPDATE staff_users SET can_waive = 1 WHERE id = ?`, desk.StaffID)
	owing := mustFindByCard(t, d, "P0002")
	reader := mustFindByCard(t, d, "P0001")
	balance := func(t *testing.T, id int64) int64 {
		t.Helper()
		var b int64
		read(t, d, func(tx *db.Tx) (err error) { b, err = patrons.Balance(tx, id); return err })
		return b
	}
	step := func() { // each write a minute later, so the ledger's order is by time
		now := d.Now().Add(time.Minute)
		d.Now = func() time.Time { return now }
	}

	t.Run("DemoBalance", func(t *testing.T) {
		if b := balance(t, owing.ID); b != 1250 {
			t.Fatalf("P0002 owes %d, want 1250", b)
		}
		if b := balance(t, reader.ID); b != 0 {
			t.Fatalf("P0001 owes %d, want 0", b)
		}
	})

	t.Run("Charge", func(t *testing.T) {
		step()
		err := write(d, func(tx *db.Tx) error {
			return patrons.Charge(tx, stacks.System, reader.ID, patrons.KindFee, 150, 0, "Replacement card")
		})
		if err != nil {
			t.Fatal(err)
		}
		if b := balance(t, reader.ID); b != 150 {
			t.Fatalf("balance %d after a 1.50 charge", b)
		}
		if audit := auditRows(t, d, reader.ID); len(audit) != 0 {
			t.Errorf("Charge wrote audit rows %q", audit)
		}
	})

	t.Run("ErrCharge", func(t *testing.T) {
		for name, fn := range map[string]func(*db.Tx) error{
			"Zero":        func(tx *db.Tx) error { return patrons.Charge(tx, desk, reader.ID, patrons.KindFee, 0, 0, "") },
			"Negative":    func(tx *db.Tx) error { return patrons.Charge(tx, desk, reader.ID, patrons.KindOverdue, -5, 0, "") },
			"PaymentKind": func(tx *db.Tx) error { return patrons.Charge(tx, desk, reader.ID, patrons.KindPayment, 100, 0, "") },
		} {
			if err := write(d, fn); stacks.ErrorCode(err) != stacks.EINVALID {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
	})

	t.Run("PayPartial", func(t *testing.T) {
		step()
		if err := write(d, func(tx *db.Tx) error { return pay(tx, owing.ID, 500, "cash") }); err != nil {
			t.Fatal(err)
		}
		if b := balance(t, owing.ID); b != 750 {
			t.Fatalf("balance %d after paying 5.00 of 12.50", b)
		}
	})

	t.Run("ErrPayTooMuch", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error { return pay(tx, owing.ID, 2000, "") })
		wantErr(t, err, stacks.EINVALID, "amount", "Blake Owing owes 7.50")
		if b := balance(t, owing.ID); b != 750 {
			t.Fatalf("balance %d after a refused payment", b)
		}
	})

	t.Run("ErrPayNothing", func(t *testing.T) {
		for _, cents := range []int64{0, -100} {
			err := write(d, func(tx *db.Tx) error { return pay(tx, owing.ID, cents, "") })
			wantErr(t, err, stacks.EINVALID, "amount")
		}
	})

	t.Run("ErrWaiveWithoutReason", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error { return waiveOldest(tx, owing.ID, 250, "  ") })
		wantErr(t, err, stacks.EINVALID, "reason", "reason")
	})

	t.Run("Waive", func(t *testing.T) {
		step()
		if err := write(d, func(tx *db.Tx) error { return waiveOldest(tx, owing.ID, 250, "First late return") }); err != nil {
			t.Fatal(err)
		}
		if b := balance(t, owing.ID); b != 500 {
			t.Fatalf("balance %d after waiving 2.50 of 7.50", b)
		}
	})

	t.Run("PayFull", func(t *testing.T) {
		step()
		if err := write(d, func(tx *db.Tx) error { return pay(tx, owing.ID, 500, "") }); err != nil {
			t.Fatal(err)
		}
		if b := balance(t, owing.ID); b != 0 {
			t.Fatalf("balance %d after paying in full", b)
		}
		err := write(d, func(tx *db.Tx) error { return pay(tx, owing.ID, 100, "") })
		wantErr(t, err, stacks.EINVALID, "amount", "owes nothing")
	})

	t.Run("EntriesNewestFirst", func(t *testing.T) {
		var es []patrons.LedgerEntry
		read(t, d, func(tx *db.Tx) (err error) { es, err = patrons.Ledger(tx, owing.ID); return err })
		if len(es) < 6 {
			t.Fatalf("%d entries, want the 3 fines and 3 credits", len(es))
		}
		got := []string{}
		for _, e := range es[:3] {
			got = append(got, e.Kind+" "+e.Description)
			if e.StaffName != "Morgan Desk" || e.LoanID != 0 || e.AmountCents >= 0 {
				t.Errorf("entry %+v", e)
			}
		}
		want := "payment Payment|waiver Waived: First late return|payment Payment: cash"
		if strings.Join(got, "|") != want {
			t.Errorf("newest entries %q, want %q", got, want)
		}
		var sum int64
		for i, e := range es {
			sum += e.AmountCents
			if i > 0 && e.CreatedAt.After(es[i-1].CreatedAt) {
				t.Errorf("entry %d is newer than entry %d", i, i-1)
			}
		}
		if sum != 0 {
			t.Errorf("entries sum to %d, want the balance 0", sum)
		}
		fine := es[len(es)-1]
		if fine.Kind != patrons.KindOverdue || fine.LoanID == 0 || fine.AmountCents <= 0 {
			t.Errorf("oldest entry %+v, want an overdue fine on a loan", fine)
		}
	})

	t.Run("Audit", func(t *testing.T) {
		audit := auditRows(t, d, owing.ID)
		// The ledger rows' ids vary with the demo data: each is matched as a
		// number.
		want := []string{
			`^patron\.pay payment \d+ of 5\.00 by cash, balance 12\.50 -> 7\.50: Payment: cash$`,
			`^patron\.waive waiver \d+ of 2\.50 on lines [\d,]+, balance 7\.50 -> 5\.00: Waived: First late return$`,
			`^patron\.pay payment \d+ of 5\.00 by cash, balance 5\.00 -> 0\.00: Payment$`,
		}
		ok := len(audit) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = regexp.MustCompile(want[i]).MatchString(audit[i])
		}
		if !ok {
			t.Errorf("audit\n%s\nwant\n%s", strings.Join(audit, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestStanding(t *testing.T) {
	d := mustOpenDB(t)
	standing := func(t *testing.T, card string) patrons.StandingSummary {
		t.Helper()
		id := mustFindByCard(t, d, card).ID
		var s patrons.StandingSummary
		read(t, d, func(tx *db.Tx) (err error) { s, err = patrons.Standing(tx, id); return err })
		return s
	}

	if s := standing(t, "P0002"); s != (patrons.StandingSummary{BalanceCents: 1250}) {
		t.Fatalf("P0002 standing %+v, want only 12.50 owed", s)
	}

	// Give P0001 two loans, one overdue, and three holds, one waiting.
	reader := mustFindByCard(t, d, "P0001")
	err := write(d, func(tx *db.Tx) error {
		item := func(barcode string) (id, record int64) {
			if err := tx.QueryRow(`SELECT id, record_id FROM items WHERE barcode = ?`, barcode).Scan(&id, &record); err != nil {
				t.Fatal(err)
			}
			return id, record
		}
		now := tx.Now()
		for i, due := range []time.Time{now.Add(-time.Hour), now.AddDate(0, 0, 21)} {
			itemID, _ := item([]string{"I00001", "I00002"}[i])
			if _, err := tx.Exec(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) VALUES (?, ?, 1, ?, ?)`,
				itemID, reader.ID, db.FormatTime(now.AddDate(0, 0, -21)), db.FormatTime(due)); err != nil {
				return err
			}
		}
		for i, status := range []string{"waiting", "queued", "in_transit", "fulfilled", "cancelled"} {
			itemID, rec := item([]string{"I00003", "I00004", "I00005", "I00006", "I00007"}[i])
			var trapped sql.NullInt64
			if status == "waiting" || status == "in_transit" {
				trapped = sql.NullInt64{Int64: itemID, Valid: true}
			}
			if _, err := tx.Exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id)
				VALUES (?, ?, 1, ?, 1, ?, ?)`, rec, reader.ID, db.FormatTime(now), status, trapped); err != nil {
				return err
			}
		}
		return patrons.Charge(tx, stacks.System, reader.ID, patrons.KindOverdue, 75, 0, "Overdue")
	})
	if err != nil {
		t.Fatal(err)
	}
	want := patrons.StandingSummary{BalanceCents: 75, Loans: 2, Overdue: 1, HoldsWaiting: 1, HoldsOpen: 3}
	if s := standing(t, "P0001"); s != want {
		t.Fatalf("P0001 standing %+v, want %+v", s, want)
	}
}
