package circulation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

var admin = stacks.Actor{Name: "admin"}

// mustOpenRulesDB opens a database with two branches, two patron categories and two
// item types, each numbered 1 and 2, and no circulation rules.
func mustOpenRulesDB(tb testing.TB) *db.DB {
	tb.Helper()
	d := dbtest.OpenAt(tb, dbtest.Monday, db.Options{})
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		for _, q := range []string{
			`INSERT INTO branches (id, code, name) VALUES (1, 'CEN', 'Central'), (2, 'EAS', 'Eastside')`,
			`INSERT INTO patron_categories (id, code, name) VALUES (1, 'ADULT', 'Adult'), (2, 'CHILD', 'Child')`,
			`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book'), (2, 'DVD', 'DVD')`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// scope names a rule's scope: category, item type, branch; 0 is "any".
type scope struct{ cat, typ, branch int64 }

func (s scope) String() string {
	f := func(id int64) string {
		if id == 0 {
			return "*"
		}
		return string(rune('0' + id))
	}
	return "cat=" + f(s.cat) + " type=" + f(s.typ) + " branch=" + f(s.branch)
}

// matches reports whether a rule of scope s applies to a category, item type and branch.
func (s scope) matches(cat, typ, branch int64) bool {
	return (s.cat == 0 || s.cat == cat) && (s.typ == 0 || s.typ == typ) && (s.branch == 0 || s.branch == branch)
}

// ruleFor is a valid rule for a scope; its loan period tells rules apart.
func ruleFor(s scope, period int) circulation.Rule {
	return circulation.Rule{PatronCategoryID: s.cat, ItemTypeID: s.typ, BranchID: s.branch,
		LoanPeriod: period, LoanUnit: "days", MaxLoans: 10, Renewals: 2, FineCents: 25, FineCapCents: 500, HoldPickupDays: 7}
}

func TestResolveRule(t *testing.T) {
	wild := scope{}
	branch := scope{branch: 1}
	cat := scope{cat: 1}
	typ := scope{typ: 1}
	tests := []struct {
		name  string
		rules []scope
		want  scope
	}{
		{"OnlyWildcard", []scope{wild}, wild},
		{"ItemTypeBeatsWildcard", []scope{wild, typ}, typ},
		{"CategoryBeatsWildcard", []scope{wild, cat}, cat},
		{"BranchBeatsWildcard", []scope{wild, branch}, branch},
		// Among rules naming as many fields: branch, then category, then item type.
		{"BranchBeatsCategory", []scope{wild, cat, branch}, branch},
		{"BranchBeatsItemType", []scope{wild, typ, branch}, branch},
		{"CategoryBeatsItemType", []scope{wild, typ, cat}, cat},
		{"BranchAndCategoryBeatBranchAndType", []scope{{typ: 1, branch: 1}, {cat: 1, branch: 1}}, scope{cat: 1, branch: 1}},
		{"BranchAndTypeBeatCategoryAndType", []scope{{cat: 1, typ: 1}, {typ: 1, branch: 1}}, scope{typ: 1, branch: 1}},
		// More named fields beat fewer, whichever they are.
		{"CategoryAndTypeBeatBranch", []scope{branch, {cat: 1, typ: 1}}, scope{cat: 1, typ: 1}},
		{"AllThreeBeatTwo", []scope{{cat: 1, branch: 1}, {cat: 1, typ: 1, branch: 1}, {typ: 1, branch: 1}}, scope{cat: 1, typ: 1, branch: 1}},
		// Rules for other scopes do not match at all, however specific.
		{"OtherBranchIgnored", []scope{wild, {cat: 1, typ: 1, branch: 2}}, wild},
		{"OtherCategoryIgnored", []scope{typ, {cat: 2, typ: 1}}, typ},
		{"OtherItemTypeIgnored", []scope{cat, {cat: 1, typ: 2}}, cat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenRulesDB(t)
			var got circulation.Rule
			err := d.Write(context.Background(), func(tx *db.Tx) error {
				for i, s := range tt.rules {
					if _, err := circulation.SaveRule(tx, admin, ruleFor(s, 10+i)); err != nil {
						return err
					}
				}
				var err error
				got, err = circulation.ResolveRule(tx, 1, 1, 1)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if gs := (scope{got.PatronCategoryID, got.ItemTypeID, got.BranchID}); gs != tt.want {
				t.Errorf("ResolveRule chose %s, want %s", gs, tt.want)
			}
			// Specificity orders the matching rules the same way.
			for _, s := range tt.rules {
				if s.matches(1, 1, 1) && s != tt.want && ruleFor(s, 1).Specificity() >= ruleFor(tt.want, 1).Specificity() {
					t.Errorf("Specificity(%s) = %d >= Specificity(%s) = %d", s, ruleFor(s, 1).Specificity(),
						tt.want, ruleFor(tt.want, 1).Specificity())
				}
			}
		})
	}

	t.Run("ErrNoRule", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			if _, err := circulation.SaveRule(tx, admin, ruleFor(scope{cat: 2}, 7)); err != nil {
				return err
			}
			_, err := circulation.ResolveRule(tx, 1, 1, 1)
			return err
		})
		wantCode(t, err, stacks.ECONFLICT)
		wantContains(t, stacks.ErrorMessage(err), "No circulation rule")
	})

	t.Run("Names", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		var got circulation.Rule
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			if _, err := circulation.SaveRule(tx, admin, ruleFor(scope{cat: 1, typ: 2, branch: 1}, 7)); err != nil {
				return err
			}
			var err error
			got, err = circulation.ResolveRule(tx, 1, 2, 1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.PatronCategoryName != "Adult" || got.ItemTypeName != "DVD" || got.BranchName != "Central" || got.LoanPeriod != 7 {
			t.Errorf("rule = %+v", got)
		}
	})
}

func TestRuleFine(t *testing.T) {
	book := circulation.Rule{FineCents: 25, FineCapCents: 500}
	graced := circulation.Rule{FineCents: 25, FineCapCents: 500, GracePeriods: 2}
	uncapped := circulation.Rule{FineCents: 100}
	free := circulation.Rule{FineCents: 0, FineCapCents: 500}
	tests := []struct {
		name  string
		rule  circulation.Rule
		units int
		want  int64
	}{
		{"NotLate", book, 0, 0},
		{"Negative", book, -3, 0},
		{"OneUnit", book, 1, 25},
		{"FourUnits", book, 4, 100},
		{"JustUnderCap", book, 19, 475},
		{"AtCap", book, 20, 500},
		{"OverCap", book, 21, 500},
		{"FarOverCap", book, 1000, 500},
		{"WithinGrace", graced, 1, 0},
		{"EndOfGrace", graced, 2, 0},
		{"BeyondGraceChargesEveryUnit", graced, 3, 75},
		{"BeyondGraceCapped", graced, 40, 500},
		{"NoCap", uncapped, 40, 4000},
		{"ZeroRate", free, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.Fine(tt.units); got != tt.want {
				t.Errorf("Fine(%d) = %d, want %d", tt.units, got, tt.want)
			}
		})
	}
}

func TestRuleValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*circulation.Rule)
		field string
	}{
		{"OK", func(*circulation.Rule) {}, ""},
		{"OKHours", func(r *circulation.Rule) { r.LoanUnit = "hours" }, ""},
		{"OKNotForLoan", func(r *circulation.Rule) { r.LoanPeriod, r.MaxLoans, r.Renewals = 0, 0, 0 }, ""},
		{"ErrLoanUnit", func(r *circulation.Rule) { r.LoanUnit = "weeks" }, "loan_unit"},
		{"ErrLoanUnitEmpty", func(r *circulation.Rule) { r.LoanUnit = "" }, "loan_unit"},
		{"ErrLoanPeriodNegative", func(r *circulation.Rule) { r.LoanPeriod = -1 }, "loan_period"},
		{"ErrLoanPeriodHuge", func(r *circulation.Rule) { r.LoanPeriod = 3651 }, "loan_period"},
		{"ErrMaxLoans", func(r *circulation.Rule) { r.MaxLoans = -1 }, "max_loans"},
		{"ErrRenewals", func(r *circulation.Rule) { r.Renewals = -1 }, "renewals"},
		{"ErrFine", func(r *circulation.Rule) { r.FineCents = -1 }, "fine"},
		{"ErrGrace", func(r *circulation.Rule) { r.GracePeriods = -1 }, "grace_periods"},
		{"ErrFineCap", func(r *circulation.Rule) { r.FineCapCents = -1 }, "fine_cap"},
		{"ErrHoldPickupDaysZero", func(r *circulation.Rule) { r.HoldPickupDays = 0 }, "hold_pickup_days"},
		{"ErrHoldPickupDaysHuge", func(r *circulation.Rule) { r.HoldPickupDays = 366 }, "hold_pickup_days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ruleFor(scope{}, 21)
			tt.edit(&r)
			err := r.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			wantCode(t, err, stacks.EINVALID)
			if got := stacks.ErrorField(err); got != tt.field {
				t.Errorf("field = %q, want %q (%v)", got, tt.field, err)
			}
			if stacks.ErrorMessage(err) == "" {
				t.Error("no message")
			}
		})
	}
}

func TestSaveRule(t *testing.T) {
	ctx := context.Background()
	save := func(d *db.DB, r circulation.Rule) (circulation.Rule, error) {
		var out circulation.Rule
		err := d.Write(ctx, func(tx *db.Tx) error {
			var err error
			out, err = circulation.SaveRule(tx, admin, r)
			return err
		})
		return out, err
	}

	t.Run("OK", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		r, err := save(d, ruleFor(scope{cat: 2, typ: 2}, 7))
		if err != nil {
			t.Fatal(err)
		}
		if r.ID == 0 || r.PatronCategoryName != "Child" || r.ItemTypeName != "DVD" || r.BranchName != "" || r.LoanPeriod != 7 {
			t.Errorf("saved rule = %+v", r)
		}
		r.LoanPeriod = 14
		r2, err := save(d, r)
		if err != nil {
			t.Fatal(err)
		}
		if r2.ID != r.ID || r2.LoanPeriod != 14 {
			t.Errorf("updated rule = %+v", r2)
		}
		var audits int
		d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'rule.save' AND object_id = ?`, r.ID).Scan(&audits)
		})
		if audits != 2 {
			t.Errorf("%d audit entries, want 2", audits)
		}
	})

	for _, s := range []scope{{}, {cat: 1}, {typ: 2, branch: 1}, {cat: 1, typ: 1, branch: 2}} {
		t.Run("ErrDuplicateScope/"+strings.ReplaceAll(s.String(), " ", ","), func(t *testing.T) {
			d := mustOpenRulesDB(t)
			if _, err := save(d, ruleFor(s, 21)); err != nil {
				t.Fatal(err)
			}
			_, err := save(d, ruleFor(s, 14))
			wantCode(t, err, stacks.ECONFLICT)
			wantContains(t, stacks.ErrorMessage(err), "already exists")
		})
	}

	t.Run("ErrUpdateIntoTakenScope", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		if _, err := save(d, ruleFor(scope{typ: 1}, 21)); err != nil {
			t.Fatal(err)
		}
		other, err := save(d, ruleFor(scope{typ: 2}, 7))
		if err != nil {
			t.Fatal(err)
		}
		other.ItemTypeID = 1
		_, err = save(d, other)
		wantCode(t, err, stacks.ECONFLICT)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		r := ruleFor(scope{}, 21)
		r.LoanUnit = "fortnights"
		_, err := save(d, r)
		wantCode(t, err, stacks.EINVALID)
	})

	t.Run("ErrUnknownID", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		r := ruleFor(scope{}, 21)
		r.ID = 99
		_, err := save(d, r)
		wantCode(t, err, stacks.ENOTFOUND)
	})

	t.Run("DeleteRule", func(t *testing.T) {
		d := mustOpenRulesDB(t)
		r, err := save(d, ruleFor(scope{}, 21))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Write(ctx, func(tx *db.Tx) error { return circulation.DeleteRule(tx, admin, r.ID) }); err != nil {
			t.Fatal(err)
		}
		err = d.Write(ctx, func(tx *db.Tx) error { return circulation.DeleteRule(tx, admin, r.ID) })
		wantCode(t, err, stacks.ENOTFOUND)
	})
}

// TestServiceRules checks the rules pages' methods: SaveRule reads the scopes in
// its transaction and writes nothing when accept refuses, RuleWithScope finds
// the rule a duplicate conflicts with, DeleteRule returns what it deleted.
func TestServiceRules(t *testing.T) {
	ctx := t.Context()
	d := mustOpenRulesDB(t)
	svc := circulation.NewService(d, nil)

	_, sc, err := svc.SaveRule(ctx, admin, ruleFor(scope{cat: 1}, 21), func(sc circulation.RuleScopes) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Categories) != 2 || len(sc.ItemTypes) != 2 || len(sc.Branches) != 2 {
		t.Errorf("scopes %+v, want two of each", sc)
	}
	if rules, err := svc.Rules(ctx); err != nil || len(rules) != 0 {
		t.Fatalf("refused: %d rules (%v), want none written", len(rules), err)
	}

	saved, _, err := svc.SaveRule(ctx, admin, ruleFor(scope{cat: 1}, 21), func(circulation.RuleScopes) bool { return true })
	if err != nil || saved.ID == 0 {
		t.Fatalf("save: %+v, %v", saved, err)
	}
	_, _, err = svc.SaveRule(ctx, admin, ruleFor(scope{cat: 1}, 14), func(circulation.RuleScopes) bool { return true })
	if stacks.ErrorCode(err) != stacks.ECONFLICT {
		t.Fatalf("duplicate scope: %v, want ECONFLICT", err)
	}
	if id, err := svc.RuleWithScope(ctx, ruleFor(scope{cat: 1}, 14)); err != nil || id != saved.ID {
		t.Errorf("RuleWithScope = %d, %v; want %d", id, err, saved.ID)
	}

	r, sc, err := svc.RuleToEdit(ctx, saved.ID)
	if err != nil || r.ID != saved.ID || len(sc.Branches) != 2 {
		t.Errorf("RuleToEdit = %+v, %+v, %v", r, sc, err)
	}
	missing := saved
	missing.ID = 999
	_, _, err = svc.SaveRule(ctx, admin, missing, func(circulation.RuleScopes) bool {
		t.Error("accept called for a rule that is gone")
		return true
	})
	if stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("update of a rule that is gone: %v, want ENOTFOUND", err)
	}

	deleted, err := svc.DeleteRule(ctx, admin, saved.ID)
	if err != nil || deleted.ID != saved.ID || deleted.LoanPeriod != 21 {
		t.Errorf("DeleteRule = %+v, %v", deleted, err)
	}
	if _, err := svc.DeleteRule(ctx, admin, saved.ID); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("second delete: %v, want ENOTFOUND", err)
	}
}
