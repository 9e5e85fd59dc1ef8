package circulation

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// What a server keeps of the circulation rules and the branch calendars. A
// checkout resolves its rule and computes its due date; read in its write
// transaction, the rules and the calendar were two statements of the ten it
// makes while holding the write lock that, on PostgreSQL, every server's writes
// share. A server keeps them in memory instead, under the circulation version
// (db.CacheCirculation, moved on by migration 0023's triggers in the
// transaction that changes a rule, a closed day, a branch or a name a rule
// shows), read with the session at the start of each request: the checkout
// uses the rules and the calendar as they were when its request began, as it
// uses the preferences (the fines limit). Without a cache (CGI mode: nothing
// outlives a request) a checkout reads them in its transaction as before.
type keptCirculation struct {
	rules     *db.VersionedCache[struct{}, []Rule]
	calendars *db.VersionedCache[calendarKey, *library.Calendar]
}

type calendarKey struct {
	branchID int64
	zone     string
	day      string
}

// keptCalendarDays is how far past its day a kept calendar reaches: a due
// date up to a year away and the 60 days after it that LoadCalendar's callers
// take as margin. A longer loan reads its calendar in its transaction.
const keptCalendarDays = 366 + 60

// keptCalendars bounds the calendars kept (one a branch and day): a
// consortium of hundreds of branches keeps every branch's for the day.
const keptCalendars = 2048

func newKeptCirculation() *keptCirculation {
	return &keptCirculation{
		rules:     db.NewVersionedCache[struct{}, []Rule](db.CacheCirculation, 1),
		calendars: db.NewVersionedCache[calendarKey, *library.Calendar](db.CacheCirculation, keptCalendars),
	}
}

// known is what a checkout takes from memory; a nil *known reads everything
// in the transaction.
type known struct {
	rules []Rule
	// cal covers the days from..to of branchID in its location.
	cal      *library.Calendar
	from, to time.Time
}

// known returns the kept rules and the calendar of branchID in loc, nil when
// the service keeps nothing.
func (s *Service) known(ctx context.Context, branchID int64, loc *time.Location) (*known, error) {
	if s.kept == nil {
		return nil, nil
	}
	rules, err := s.kept.rules.Get(ctx, s.DB, struct{}{}, listRules)
	if err != nil {
		return nil, err
	}
	k := &known{rules: rules}
	day := today(s.DB.Now(), loc)
	k.from, k.to = day.AddDate(0, 0, -1), day.AddDate(0, 0, keptCalendarDays)
	cal, err := s.kept.calendars.Get(ctx, s.DB, calendarKey{branchID, loc.String(), day.Format(db.DayFormat)},
		func(tx *db.Tx) (*library.Calendar, error) {
			return library.LoadCalendar(tx, branchID, loc, k.from, k.to)
		})
	switch {
	case stacks.ErrorCode(err) == stacks.ENOTFOUND:
		// No such branch: the transaction's own read says so.
	case err != nil:
		return nil, err
	default:
		k.cal = cal
	}
	return k, nil
}

// rule resolves the rule for a patron category, an item type and a branch:
// among the kept rules, or in tx.
func (k *known) rule(tx *db.Tx, categoryID, itemTypeID, branchID int64) (Rule, error) {
	if k == nil {
		return ResolveRule(tx, categoryID, itemTypeID, branchID)
	}
	return resolveAmong(k.rules, categoryID, itemTypeID, branchID)
}

// resolveAmong is ResolveRule over rules in memory: the matching rule whose
// scope is most specific (a branch counts 12, a patron category 10, an item
// type 9; the scope is unique, so no two matching rules score the same).
func resolveAmong(rules []Rule, categoryID, itemTypeID, branchID int64) (Rule, error) {
	best, bestScore := -1, -1
	for i, r := range rules {
		if (r.PatronCategoryID != 0 && r.PatronCategoryID != categoryID) ||
			(r.ItemTypeID != 0 && r.ItemTypeID != itemTypeID) ||
			(r.BranchID != 0 && r.BranchID != branchID) {
			continue
		}
		score := 0
		if r.BranchID != 0 {
			score += 12
		}
		if r.PatronCategoryID != 0 {
			score += 10
		}
		if r.ItemTypeID != 0 {
			score += 9
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return Rule{}, errNoRule()
	}
	return rules[best], nil
}

// dueAt is the package's dueAt, from the kept calendar when it is the
// branch's in loc and covers the loan.
func (k *known) dueAt(tx *db.Tx, rule Rule, branchID int64, loc *time.Location) (time.Time, error) {
	if k == nil || k.cal == nil || k.cal.Branch.ID != branchID || k.cal.Location.String() != loc.String() {
		return dueAt(tx, rule, branchID, loc)
	}
	now := tx.Now()
	if now.Before(k.from.AddDate(0, 0, 1)) || now.Add(loanSpan(rule)).AddDate(0, 0, 60).After(k.to) {
		return dueAt(tx, rule, branchID, loc)
	}
	return k.cal.DueAt(now, rule.LoanPeriod, rule.LoanUnit), nil
}
