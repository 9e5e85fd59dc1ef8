package patrons_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

func load(t *testing.T, d *db.DB, csv string, opt patrons.LoadOptions) (*patrons.LoadResult, error) {
	t.Helper()
	if opt.Actor.Name == "" {
		opt.Actor = desk
	}
	return patrons.Load(context.Background(), d, strings.NewReader(csv), opt)
}

// tableDump is every patron row and the audit log, to compare before and after.
func tableDump(t *testing.T, d *db.DB) string {
	t.Helper()
	var b strings.Builder
	read(t, d, func(tx *db.Tx) error {
		for _, q := range []string{
			`SELECT id, card, surname, first_name, email, phone, address, category_id, home_branch_id, expires_on, notes,
				coalesce(external_id, '-'), pin_hash, pin_generation FROM patrons ORDER BY id`,
			`SELECT id, action, object_id, detail, '', '', '', '', '', '', '', '', '', '' FROM audit_log ORDER BY id`,
		} {
			rows, err := tx.Query(q)
			if err != nil {
				return err
			}
			for rows.Next() {
				v := make([]any, 14)
				p := make([]any, 14)
				for i := range v {
					p[i] = &v[i]
				}
				if err := rows.Scan(p...); err != nil {
					rows.Close()
					return err
				}
				fmt.Fprintln(&b, v...)
			}
			rows.Close()
		}
		return nil
	})
	return b.String()
}

func countPatrons(t *testing.T, d *db.DB, where string, args ...any) int {
	t.Helper()
	var n int
	read(t, d, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM patrons WHERE `+where, args...).Scan(&n)
	})
	return n
}

// TestLoadProblems: each kind of problem is named on its row, with the row's
// line, and a row with several problems lists them all.
func TestLoadProblems(t *testing.T) {
	d := mustOpenDB(t)
	header := "cardnumber,surname,firstname,categorycode,branchcode,dateexpiry,email,phone,student_id,pin\n"
	tests := []struct {
		name  string
		row   string
		match string
		want  []string
	}{
		{"UnknownCategory", "N1,Doe,Jo,PIRATE,CEN,2027-08-31,,,,", "", []string{`category: there is no patron category "PIRATE"; the codes are ADULT, CHILD, STAFF`}},
		{"UnknownBranch", "N1,Doe,Jo,ADULT,MARS,2027-08-31,,,,", "", []string{`home_branch: there is no branch with code "MARS"; the codes are CEN, EAS, WES`}},
		{"BadDate", "N1,Doe,Jo,ADULT,CEN,31/08/2027,,,,", "", []string{`expires_on: "31/08/2027" is not a date; write it as YYYY-MM-DD`}},
		{"BadEmail", "N1,Doe,Jo,ADULT,CEN,2027-08-31,jo.example.org,,,", "", []string{"email: Enter an e-mail address like name@example.org"}},
		{"NoSurname", "N1,,Jo,ADULT,CEN,2027-08-31,,,,", "", []string{"surname: Enter the patron's surname."}},
		{"LongSurname", "N1," + strings.Repeat("x", 101) + ",Jo,ADULT,CEN,2027-08-31,,,,", "", []string{"surname: Enter a surname of at most 100 characters"}},
		{"ControlChars", "N1,Do\x00e,Jo,ADULT,CEN,2027-08-31,,,,", "", []string{"surname: Enter a surname of at most 100 characters on one line"}},
		{"LongPhone", "N1,Doe,Jo,ADULT,CEN,2027-08-31,," + strings.Repeat("5", 41) + ",,", "", []string{"phone: Enter a phone number of at most 40"}},
		{"BadCard", "N 1,Doe,Jo,ADULT,CEN,2027-08-31,,,,", "", []string{"card: A card number has 1 to 32 letters, digits or hyphens"}},
		{"NoCard", ",Doe,Jo,ADULT,CEN,2027-08-31,,,,", "", []string{"card: the row has no card number"}},
		{"CardInUse", "P0001,Doe,Jo,ADULT,CEN,2027-08-31,,,S1,", patrons.MatchExternalID, []string{"card: card number P0001 is already in use by another patron (Alex Reader)"}},
		{"NoExternalID", "N1,Doe,Jo,ADULT,CEN,2027-08-31,,,,", patrons.MatchExternalID, []string{"external_id: the row has no external id"}},
		{"LongExternalID", "N1,Doe,Jo,ADULT,CEN,2027-08-31,,," + strings.Repeat("9", 65) + ",", "", []string{"external_id: An external id has at most 64 characters"}},
		{"ShortPIN", "N1,Doe,Jo,ADULT,CEN,2027-08-31,,,,12", "", []string{"pin: Choose a PIN of 4 to 32"}},
		{"InvalidUTF8", "N1,Do\xffe,Jo,ADULT,CEN,2027-08-31,,,,", "", []string{`surname: the text is not UTF-8; save the file as "CSV UTF-8"`}},
		{"ExpiryPast", "N1,Doe,Jo,ADULT,CEN,2025-08-31,,,,", "", []string{"expires_on: 2025-08-31 is before today (2026-11-30), so the card would be expired at once; is this last year's file?"}},
		{"ExpiryPastUpdate", "P0001,,,,,2026-08-31,,,,", "", []string{"expires_on: 2026-08-31 is before today (2026-11-30)"}},
		{"WrongWidth", "N1,Doe,Jo,ADULT,CEN", "", []string{"The row has 5 cells where the header has 10"}},
		{"Several", "N1,,Jo,PIRATE,MARS,tomorrow,nope,,,", "", []string{"surname:", "category: there is no", "home_branch: there is no", "expires_on:", "email:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tableDump(t, d)
			res, err := load(t, d, header+tt.row+"\n", patrons.LoadOptions{Match: tt.match})
			if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "nothing was imported") {
				t.Fatalf("err = %v, want bad rows", err)
			}
			bad := res.BadRows()
			if len(bad) != 1 || bad[0].Line != 2 {
				t.Fatalf("bad rows %+v, want line 2", bad)
			}
			got := strings.Join(bad[0].Problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(bad[0].Problems) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%s", len(bad[0].Problems), len(tt.want), got)
			}
			if after := tableDump(t, d); after != before {
				t.Error("a refused load changed the database")
			}
		})
	}
}

// TestLoadFileErrors: a file that is not CSV, lacks the match column, repeats a
// column or has no rows is refused as a whole.
func TestLoadFileErrors(t *testing.T) {
	d := mustOpenDB(t)
	tests := []struct {
		name, csv, match, want string
	}{
		{"Empty", "", "", "The file is empty"},
		{"HeaderOnly", "card,surname\n", "", "no patrons"},
		{"NoMatchColumn", "surname,first_name\nDoe,Jo\n", "", "The file has no card column"},
		{"NoExternalIDColumn", "card,surname\nN1,Doe\n", patrons.MatchExternalID, "The file has no external_id column"},
		{"DuplicateColumn", "card,cardnumber,surname\nN1,N1,Doe\n", "", "names the card column twice"},
		{"BadQuote", "card,surname\nN1,\"Doe\nN2,Roe\n", "", "is not valid CSV"},
		{"BareQuote", "card,surname\nN1,Do\"e\n", "", "Line 2 is not valid CSV"},
		{"BadMatch", "card,surname\nN1,Doe\n", "name", "Match rows on the card number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, d, tt.csv, patrons.LoadOptions{Match: tt.match})
			if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), tt.want) {
				t.Fatalf("err = %v (%s), want %q", err, stacks.ErrorMessage(err), tt.want)
			}
		})
	}
}

// TestLoadHeader: headers are matched by name in any case and under Koha's
// names; a byte order mark and quoted cells are read; unknown columns are
// reported.
func TestLoadHeader(t *testing.T) {
	d := mustOpenDB(t)
	csv := "\uFEFFCardNumber,Last Name,FIRSTNAME,CategoryCode,BranchCode,DateExpiry,Shoe Size,Address\r\n" +
		"n100,\"O'Hara, Jr\",Sam,child,eas,2027-08-31,42,\"1 Main St\r\nFlat 2\"\r\n"
	res, err := load(t, d, csv, patrons.LoadOptions{})
	if err != nil {
		t.Fatalf("load: %v %+v", err, res)
	}
	if fmt.Sprint(res.Unknown) != "[Shoe Size]" {
		t.Errorf("unknown columns %v", res.Unknown)
	}
	if res.Created != 1 || !res.Imported {
		t.Fatalf("result %+v", res)
	}
	p := mustFindByCard(t, d, "N100")
	if p.Surname != "O'Hara, Jr" || p.FirstName != "Sam" || p.CategoryCode != "CHILD" || p.HomeBranchCode != "EAS" ||
		p.ExpiresOn.Format("2006-01-02") != "2027-08-31" || p.Address != "1 Main St\nFlat 2" {
		t.Errorf("patron %+v", p)
	}
}

// TestLoadCreateAndUpdate: by card and by external id, a row creates a patron
// when none matches and updates only the columns the file has when one does.
func TestLoadCreateAndUpdate(t *testing.T) {
	t.Run("ByCard", func(t *testing.T) {
		d := mustOpenDB(t)
		before := mustFindByCard(t, d, "P0001")
		res, err := load(t, d, "card,category,dateexpiry,email\nP0001,STAFF,2028-01-31,\nN1,ADULT,,n1@example.org\n",
			patrons.LoadOptions{DefaultBranch: "WES"})
		// N1 has no surname: a new patron needs one.
		if err == nil || len(res.BadRows()) != 1 || res.BadRows()[0].Line != 3 {
			t.Fatalf("err %v, bad %+v", err, res.BadRows())
		}
		res, err = load(t, d, "card,surname,category,dateexpiry,email\nP0001,,STAFF,2028-01-31,\nN1,Newby,ADULT,,n1@example.org\n",
			patrons.LoadOptions{DefaultBranch: "WES"})
		if err != nil || res.Created != 1 || res.Updated != 1 {
			t.Fatalf("err %v, result %+v", err, res)
		}
		after := mustFindByCard(t, d, "P0001")
		if after.CategoryCode != "STAFF" || after.ExpiresOn.Format("2006-01-02") != "2028-01-31" ||
			after.Email != before.Email || after.Surname != before.Surname || after.Phone != before.Phone {
			t.Errorf("updated %+v from %+v", after, before)
		}
		n1 := mustFindByCard(t, d, "N1")
		// No expiry: the category's 12 months from the demo's today (2026-11-30).
		if n1.HomeBranchCode != "WES" || n1.ExpiresOn.Format("2006-01-02") != "2027-11-30" || n1.Email != "n1@example.org" {
			t.Errorf("created %+v", n1)
		}
		var audits int
		read(t, d, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action IN ('patron.create', 'patron.update', 'patron.load') AND detail LIKE '%load%'`).Scan(&audits)
		})
		if audits != 3 {
			t.Errorf("%d audit entries, want one per patron and one for the load", audits)
		}
		// The same file again changes nothing.
		res, err = load(t, d, "card,surname,category,dateexpiry,email\nP0001,,STAFF,2028-01-31,\nN1,Newby,ADULT,,n1@example.org\n",
			patrons.LoadOptions{DefaultBranch: "WES"})
		if err != nil || res.Unchanged != 2 || res.Created+res.Updated != 0 {
			t.Errorf("second load: %v %+v", err, res)
		}
	})
	t.Run("ClearEmpty", func(t *testing.T) {
		d := mustOpenDB(t)
		if _, err := load(t, d, "card,email,phone\nP0001,,\n", patrons.LoadOptions{ClearEmpty: true}); err != nil {
			t.Fatal(err)
		}
		if p := mustFindByCard(t, d, "P0001"); p.Email != "" || p.Phone != "" {
			t.Errorf("not cleared: %q %q", p.Email, p.Phone)
		}
	})
	t.Run("ByExternalID", func(t *testing.T) {
		d := mustOpenDB(t)
		// Give P0002 an external id, then update it by that id with a new card.
		if _, err := load(t, d, "card,student_id\nP0002,S-17\n", patrons.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		res, err := load(t, d, "student_id,card,surname,category,branch\nS-17,P0002X,,CHILD,\nS-18,N18,Kid,CHILD,EAS\n",
			patrons.LoadOptions{Match: patrons.MatchExternalID})
		if err != nil || res.Created != 1 || res.Updated != 1 {
			t.Fatalf("err %v, result %+v", err, res)
		}
		if countPatrons(t, d, `card = 'P0002X' AND external_id = 'S-17' AND surname = 'Owing'`) != 1 {
			t.Error("P0002 not updated by its external id")
		}
		if countPatrons(t, d, `card = 'N18' AND external_id = 'S-18'`) != 1 {
			t.Error("S-18 not created")
		}
		// An external id another patron has is refused.
		_, err = load(t, d, "card,student_id\nP0001,S-17\n", patrons.LoadOptions{})
		if err == nil {
			t.Error("a second patron took external id S-17")
		}
	})
	pinMatches := func(t *testing.T, d *db.DB, card, pin string) bool {
		t.Helper()
		p := mustFindByCard(t, d, card)
		var hash string
		read(t, d, func(tx *db.Tx) (err error) { hash, err = patrons.PINHash(tx, p.ID); return err })
		ok, err := patrons.CheckPIN(context.Background(), hash, pin)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	const pinFile = "card,surname,category,branch,pin\nN1,Pin,ADULT,CEN,2468\nP0001,,,,9753\n"
	t.Run("PINOnCreateOnly", func(t *testing.T) {
		// Reloading a file must not undo the PINs patrons chose since: an
		// existing patron's PIN stays (the demo's 1234).
		d := mustOpenDB(t)
		res, err := load(t, d, pinFile, patrons.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !pinMatches(t, d, "N1", "2468") {
			t.Error("N1: the new patron's PIN was not set")
		}
		if pinMatches(t, d, "P0001", "9753") || !pinMatches(t, d, "P0001", "1234") {
			t.Error("P0001: the load overwrote an existing patron's PIN")
		}
		if res.PINs != 1 || res.Rows[1].Action != "unchanged" {
			t.Errorf("PINs %d, P0001 %+v; want 1 PIN, P0001 unchanged", res.PINs, res.Rows[1])
		}
	})
	t.Run("OverwritePINs", func(t *testing.T) {
		d := mustOpenDB(t)
		if _, err := load(t, d, pinFile, patrons.LoadOptions{OverwritePINs: true}); err != nil {
			t.Fatal(err)
		}
		for card, pin := range map[string]string{"N1": "2468", "P0001": "9753"} {
			if !pinMatches(t, d, card, pin) {
				t.Errorf("%s: PIN %s does not match", card, pin)
			}
		}
	})
}

// TestExternalIDOnForm: the patron form's Create and Update keep an external
// id, and refuse one another patron has.
func TestExternalIDOnForm(t *testing.T) {
	d := mustOpenDB(t)
	err := write(d, func(tx *db.Tx) error {
		_, err := patrons.Create(tx, desk, patrons.Input{Card: "X1", Surname: "Ext", CategoryCode: "ADULT", HomeBranchCode: "CEN", ExternalID: " ST-9 "})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := mustFindByCard(t, d, "X1"); p.ExternalID != "ST-9" {
		t.Fatalf("external id %q", p.ExternalID)
	}
	p1 := mustFindByCard(t, d, "P0001")
	err = write(d, func(tx *db.Tx) error {
		_, err := patrons.Update(tx, desk, p1.ID, patrons.Input{Card: p1.Card, Surname: p1.Surname, CategoryCode: p1.CategoryCode,
			HomeBranchCode: p1.HomeBranchCode, ExternalID: "ST-9"})
		return err
	})
	if stacks.ErrorCode(err) != stacks.ECONFLICT || stacks.ErrorField(err) != "external_id" {
		t.Errorf("a second patron with ST-9: %v", err)
	}
}

// TestLoadMaxPINs: a file setting more PINs than allowed is refused whole,
// and a dry run says so too (it would otherwise say all is well).
func TestLoadMaxPINs(t *testing.T) {
	d := mustOpenDB(t)
	before := tableDump(t, d)
	const file = "card,surname,category,branch,pin\nN1,A,ADULT,CEN,1111\nN2,B,ADULT,CEN,2222\n"
	res, err := load(t, d, file, patrons.LoadOptions{MaxPINs: 1, DryRun: true})
	if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "The file sets 2 PINs") || res.PINs != 2 {
		t.Fatalf("dry run: err %v, PINs %d", err, res.PINs)
	}
	_, err = load(t, d, file, patrons.LoadOptions{MaxPINs: 1})
	if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "The file sets 2 PINs") {
		t.Fatalf("err %v", err)
	}
	if tableDump(t, d) != before {
		t.Error("a refused file changed the database")
	}
}

// TestApplyLoadProgressAndDeadline: CheckLoad hashes and writes nothing;
// ApplyLoad tells Progress of each PIN hashed, on the bounded pool of package
// passwords, and writes nothing when its context ends first (a background load
// past its deadline); a load is written once.
func TestApplyLoadProgressAndDeadline(t *testing.T) {
	d := mustOpenDB(t)
	before := tableDump(t, d)
	const file = "card,surname,category,branch,pin\nN1,A,ADULT,CEN,1111\nN2,B,ADULT,CEN,2222\nN3,C,ADULT,CEN,3333\n"
	ctx := context.Background()
	hashes := passwords.Hashes()
	res, err := patrons.CheckLoad(ctx, d, strings.NewReader(file), patrons.LoadOptions{Actor: desk})
	if err != nil || res.PINs != 3 || res.Imported {
		t.Fatalf("check: %v, %d PINs, imported %v", err, res.PINs, res.Imported)
	}
	if passwords.Hashes() != hashes || tableDump(t, d) != before {
		t.Fatal("the check hashed or wrote")
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := patrons.ApplyLoad(ended, d, res, patrons.LoadOptions{Actor: desk}); err == nil || res.Imported {
		t.Fatalf("apply after the deadline: %v, imported %v; want an error and nothing written", err, res.Imported)
	}
	if tableDump(t, d) != before {
		t.Error("a load stopped by its deadline changed the database")
	}

	res, err = patrons.CheckLoad(ctx, d, strings.NewReader(file), patrons.LoadOptions{Actor: desk})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []int
	opt := patrons.LoadOptions{Actor: desk, Progress: func(hashed, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total != 3 {
			t.Errorf("progress: total %d, want 3", total)
		}
		seen = append(seen, hashed)
	}}
	hashes = passwords.Hashes()
	if err := patrons.ApplyLoad(ctx, d, res, opt); err != nil || !res.Imported {
		t.Fatalf("apply: %v, imported %v", err, res.Imported)
	}
	sort.Ints(seen)
	if fmt.Sprint(seen) != "[1 2 3]" {
		t.Errorf("progress %v, want 1, 2 and 3 of 3", seen)
	}
	if n := passwords.Hashes() - hashes; n < 3 {
		t.Errorf("%d PINs hashed on the pool, want 3", n)
	}
	if n := countPatrons(t, d, "card IN ('N1', 'N2', 'N3') AND pin_hash <> ''"); n != 3 {
		t.Errorf("%d patrons with PINs, want 3", n)
	}
	if err := patrons.ApplyLoad(ctx, d, res, opt); err == nil {
		t.Error("a load was applied twice")
	}
}

// TestLoadPINsShareThePool: while a load hashes its PINs, a sign-in's
// comparison on the same bounded pool takes its turn between them, long before
// the load ends: the load holds a slot one PIN at a time, never the pool for
// the whole file.
func TestLoadPINsShareThePool(t *testing.T) {
	d := mustOpenDB(t)
	defer func(c int) { passwords.BcryptCost = c }(passwords.BcryptCost)
	passwords.BcryptCost = 6 // a few milliseconds a PIN: 200 PINs keep the pool busy a while
	signIn, err := bcrypt.GenerateFromPassword([]byte("desk"), passwords.BcryptCost)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("card,surname,category,branch,pin\n")
	const n = 200
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "Q%04d,Queue,ADULT,CEN,%04d\n", i, 1000+i)
	}
	ctx := context.Background()
	res, err := patrons.CheckLoad(ctx, d, strings.NewReader(b.String()), patrons.LoadOptions{Actor: desk})
	if err != nil {
		t.Fatal(err)
	}
	var hashed atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- patrons.ApplyLoad(ctx, d, res, patrons.LoadOptions{Actor: desk, Progress: func(h, _ int) {
			hashed.Store(int64(h))
			once.Do(func() { close(started) })
		}})
	}()
	<-started
	for i := range 3 {
		ok, err := passwords.Compare(ctx, string(signIn), "desk")
		if err != nil || !ok {
			t.Fatalf("sign-in %d during the load: %v, %v; want it compared", i+1, ok, err)
		}
	}
	if h := hashed.Load(); h >= n {
		t.Errorf("3 sign-ins were compared only after the load's %d PINs: the load kept the pool", h)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := countPatrons(t, d, "card LIKE 'Q%' AND pin_hash <> ''"); got != n {
		t.Errorf("%d patrons with PINs, want %d", got, n)
	}
}

// TestLoadDuplicates: a card or external id on two rows makes both bad.
func TestLoadDuplicates(t *testing.T) {
	d := mustOpenDB(t)
	res, err := load(t, d, "card,surname,category,branch,external_id\nN1,A,ADULT,CEN,X1\nN2,B,ADULT,CEN,X1\nn1,C,ADULT,CEN,\n", patrons.LoadOptions{})
	if err == nil {
		t.Fatal("duplicates loaded")
	}
	bad := res.BadRows()
	if len(bad) != 3 {
		t.Fatalf("bad rows %+v", bad)
	}
	if !strings.Contains(strings.Join(bad[0].Problems, " "), "card N1 is also on line 4") ||
		!strings.Contains(strings.Join(bad[0].Problems, " "), "external id X1 is also on line 3") {
		t.Errorf("line 2 problems %v", bad[0].Problems)
	}
}

// TestLoadDryRun: a dry run says what it would do and writes nothing.
func TestLoadDryRun(t *testing.T) {
	d := mustOpenDB(t)
	before := tableDump(t, d)
	res, err := load(t, d, "card,surname,category,branch,pin\nN1,New,ADULT,CEN,2468\nP0001,Renamed,,,\nP0003,,,,\nN2,,NOPE,CEN,\n",
		patrons.LoadOptions{DryRun: true, SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported || res.Created != 1 || res.Updated != 1 || res.Unchanged != 1 || res.Bad != 1 {
		t.Errorf("result %+v", res)
	}
	if res.Rows[1].Action != "update" || fmt.Sprint(res.Rows[1].Changes) != "[surname]" || fmt.Sprint(res.Rows[1].Details) != `[surname "Reader" -> "Renamed"]` {
		t.Errorf("row 3: %+v", res.Rows[1])
	}
	if after := tableDump(t, d); after != before {
		t.Error("the dry run changed the database")
	}
}

// TestLoadBadRows: by default one bad row stops the file; with SkipBad the good
// rows are written and the bad one named.
func TestLoadBadRows(t *testing.T) {
	d := mustOpenDB(t)
	csv := "card,surname,category,branch\nN1,Good,ADULT,CEN\nN2,Bad,NOPE,CEN\nN3,Good,CHILD,EAS\n"
	before := tableDump(t, d)
	res, err := load(t, d, csv, patrons.LoadOptions{})
	if err == nil || res.Imported || res.Bad != 1 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if after := tableDump(t, d); after != before {
		t.Fatal("a file with a bad row changed the database")
	}
	res, err = load(t, d, csv, patrons.LoadOptions{SkipBad: true})
	if err != nil || !res.Imported || res.Created != 2 || res.Bad != 1 || res.BadRows()[0].Card != "N2" {
		t.Fatalf("skip bad: err %v, result %+v", err, res)
	}
	if countPatrons(t, d, `card IN ('N1', 'N3')`) != 2 || countPatrons(t, d, `card = 'N2'`) != 0 {
		t.Error("skip bad did not import the good rows only")
	}
}

// failLast is a trigger that fails the insert of patron Z9999, written for each
// engine: PostgreSQL's trigger runs a plpgsql function (created first).
var failLast = db.PerEngine{
	SQLite: `CREATE TRIGGER fail_last BEFORE INSERT ON patrons WHEN NEW.card = 'Z9999'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
	Postgres: `CREATE TRIGGER fail_last BEFORE INSERT ON patrons FOR EACH ROW WHEN (NEW.card = 'Z9999')
		EXECUTE FUNCTION fail_last()`,
}

// failLastFunction is the function PostgreSQL's failLast runs.
const failLastFunction = `CREATE FUNCTION fail_last() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN RAISE EXCEPTION 'injected failure'; END $$`

// TestLoadOneTransaction: a failure at the last row, inside the write, undoes
// every row before it. The failure is a trigger (failLast), one for each engine.
func TestLoadOneTransaction(t *testing.T) {
	d := mustOpenDB(t)
	err := write(d, func(tx *db.Tx) error {
		if tx.Engine() == db.Postgres {
			if _, err := tx.Exec(failLastFunction); err != nil {
				return err
			}
		}
		_, err := tx.Exec(tx.SQL(failLast))
		return err
	})
	if err != nil {
		t.Fatalf("create the trigger: %v", err)
	}
	var b strings.Builder
	b.WriteString("card,surname,category,branch\nP0001,Changed,,\n")
	for i := range 500 {
		fmt.Fprintf(&b, "T%04d,Row,ADULT,CEN\n", i)
	}
	b.WriteString("Z9999,Last,ADULT,CEN\n")
	before := tableDump(t, d)
	res, err := load(t, d, b.String(), patrons.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "injected failure") || res.Imported {
		t.Fatalf("err %v", err)
	}
	if after := tableDump(t, d); after != before {
		t.Error("a load that failed at its last row left rows behind")
	}
}

// TestLoadDelimiter: a file Excel saved with semicolons (or tabs) is read with
// them when its header row has no comma.
func TestLoadDelimiter(t *testing.T) {
	for name, tt := range map[string]struct {
		csv  string
		want rune
	}{
		"Semicolon": {"card;surname;category;branch;address\nN5;Semi;ADULT;CEN;\"1, Main St\"\n", ';'},
		"Tab":       {"card\tsurname\tcategory\tbranch\taddress\nN5\tSemi\tADULT\tCEN\t1, Main St\n", '\t'},
		"Comma":     {"card,surname,category,branch,address\nN5,Semi;colon,ADULT,CEN,1 Main St\n", ','},
	} {
		t.Run(name, func(t *testing.T) {
			d := mustOpenDB(t)
			res, err := load(t, d, tt.csv, patrons.LoadOptions{})
			if err != nil || res.Created != 1 || res.Delimiter != tt.want {
				t.Fatalf("err %v, result %+v", err, res)
			}
			if p := mustFindByCard(t, d, "N5"); !strings.HasPrefix(p.Surname, "Semi") || p.CategoryCode != "ADULT" {
				t.Errorf("patron %+v", p)
			}
		})
	}
}

// TestLoadCardSwap: two patrons matched by external id swapping cards in one
// file is checked against the file's final state and written; a card another
// patron keeps in the file is refused, naming that patron's line.
func TestLoadCardSwap(t *testing.T) {
	d := mustOpenDB(t)
	if _, err := load(t, d, "card,student_id\nP0001,S1\nP0002,S2\nP0003,S3\n", patrons.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := load(t, d, "student_id,card\nS1,P0002\nS2,P0003\nS3,P0001\n", patrons.LoadOptions{Match: patrons.MatchExternalID})
	if err != nil || res.Updated != 3 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if countPatrons(t, d, `(external_id, card, surname) IN (VALUES ('S1', 'P0002', 'Reader'), ('S2', 'P0003', 'Owing'), ('S3', 'P0001', 'Waiting'))`) != 3 {
		t.Error("the cards were not rotated")
	}
	res, err = load(t, d, "student_id,card,surname\nS1,P0003,\nS2,,Renamed\n", patrons.LoadOptions{Match: patrons.MatchExternalID})
	if err == nil || len(res.BadRows()) != 2 {
		t.Fatalf("err %v, bad %+v", err, res.BadRows())
	}
	if got := strings.Join(res.BadRows()[0].Problems, " "); !strings.Contains(got, "card P0003 is also on line 3") {
		t.Errorf("problems %q", got)
	}
	// The other patron's row is bad itself: the card stays theirs.
	res, err = load(t, d, "student_id,card,category\nS1,P0003,\nS2,N2,PIRATE\n", patrons.LoadOptions{Match: patrons.MatchExternalID})
	if err == nil || len(res.BadRows()) != 2 {
		t.Fatalf("err %v, bad %+v", err, res.BadRows())
	}
	if got := strings.Join(res.BadRows()[0].Problems, " "); !strings.Contains(got, "card number P0003 is already in use by another patron (Blake Owing); line 3 gives them another card but has problems of its own") {
		t.Errorf("problems %q", got)
	}
}

// TestLoadMaxRows: the administration page's cap refuses a longer file whole,
// saying where a longer one can be loaded.
func TestLoadMaxRows(t *testing.T) {
	d := mustOpenDB(t)
	_, err := load(t, d, "card,surname,category,branch\nN1,A,ADULT,CEN\nN2,B,ADULT,CEN\nN3,C,ADULT,CEN\n", patrons.LoadOptions{MaxRows: 2})
	if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "more than 2 rows") || !strings.Contains(stacks.ErrorMessage(err), "stacks patrons import") {
		t.Fatalf("err %v", err)
	}
	if countPatrons(t, d, `card IN ('N1', 'N2', 'N3')`) != 0 {
		t.Error("a refused file was loaded")
	}
}
